/**
 * Conformance on Bun: `bun run` of tests/conformance/entries/bun.ts (the
 * reference app behind `Bun.serve`), with a libSQL file for users
 * and tokens and Upstash (the REST bridge in front of the local Redis) for
 * the denylist, limits and notes; without Redis, `LibsqlKV` in the same
 * file. Bun resolves the `@portcullis/*` packages through node_modules,
 * linked here as an install would (`npm install` provides the drivers).
 * TOTP, passkeys and OpenID Connect (against oidc-provider) on. The start
 * is `startEntry("bun")` (_start_entry.ts).
 *
 * Usage: `deno run -A tests/conformance/run_bun.ts`
 *
 * @module
 */
import { runEntry } from "./_run_entry.ts";

await runEntry("bun");
