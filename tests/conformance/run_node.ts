/**
 * Conformance on Node ≥ 20: tests/conformance/entries/node.ts (the
 * reference app behind the `node:http` adapter) bundled by esbuild with the
 * deno.json import map (npm packages left to node_modules), started with
 * `node`; a libSQL file for users and tokens, `LibsqlKV` in the same file
 * for the denylist, limits and notes. TOTP, passkeys and OpenID Connect
 * (against oidc-provider) on. The start is `startEntry("node")`
 * (_start_entry.ts).
 *
 * Usage: `deno run -A tests/conformance/run_node.ts`
 *
 * @module
 */
import { runEntry } from "./_run_entry.ts";

await runEntry("node");
