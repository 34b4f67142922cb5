/**
 * Conformance on Vercel's edge runtime: tests/conformance/entries/vercel_edge.ts
 * (the Edge Function's app) bundled by esbuild as a classic script (IIFE,
 * `edge-light`/`worker`/`browser` conditions) and served by npm
 * `edge-runtime` under Node (edge_host.mjs), with string and WASM code
 * generation refused as in production.
 *
 * Stores: Upstash (@upstash/redis through the REST bridge to the local
 * Redis) for the denylist, limits and notes. Users and tokens: the
 * function's production path, `SQLCredentialStore` and
 * `SQLVerificationTokenStore` over `drizzle-orm/libsql/web` and
 * `@libsql/client/web`, talking the libSQL remote protocol (Hrana over
 * HTTP) to tests/support/libsql_http_bridge.ts, which runs the statements
 * on a real local libSQL file (no libSQL server, sqld, can be installed
 * here: it is not on npm). TOTP, passkeys and OpenID Connect (against
 * oidc-provider) on. The start is `startEntry("vercel_edge")`
 * (_start_entry.ts).
 *
 * Usage: `deno run -A tests/conformance/run_vercel_edge.ts`
 *
 * @module
 */
import { runEntry } from "./_run_entry.ts";

await runEntry("vercel_edge");
