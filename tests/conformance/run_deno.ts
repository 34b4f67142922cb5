/**
 * Conformance on Deno: the reference app wired for Deno and Deno Deploy
 * (tests/conformance/entries/deno.ts) in this process, behind `Deno.serve`
 * on 127.0.0.1, with Deno KV and a libSQL file in a scratch directory, and
 * mail to the sink; TOTP, passkeys and OpenID Connect (against
 * oidc-provider) on. The start is `startEntry("deno")` (_start_entry.ts).
 *
 * Usage: `deno run -A tests/conformance/run_deno.ts`
 *
 * @module
 */
import { runEntry } from "./_run_entry.ts";

await runEntry("deno");
