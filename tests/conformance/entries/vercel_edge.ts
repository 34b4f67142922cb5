/**
 * What the Vercel Edge conformance run bundles as a classic script for
 * Vercel's `edge-runtime`: the Edge Function's `createEdgeApp` with the
 * conformance hasher, on a `fetch` event listener (how edge-runtime, like
 * Vercel, delivers requests). Users and tokens take the function's
 * production path: SQL stores over `@libsql/client/web` to `DATABASE_URL`,
 * which run_vercel_edge.ts points at the libSQL HTTP bridge.
 *
 * @module
 */
import {
  createEdgeApp,
  type Env,
} from "../../../examples/vercel_edge/api/index.ts";
import {
  CONFORMANCE_LIMITS,
  conformanceHasher,
  withHasherReport,
} from "../_hasher.ts";

interface FetchEventLike {
  request: Request;
  respondWith(response: Promise<Response>): void;
}

const env = (globalThis as unknown as { process: { env: Env } }).process.env;
const hasher = conformanceHasher();
const app = createEdgeApp(env, {
  hasher,
  limits: CONFORMANCE_LIMITS,
}).then((a) => withHasherReport(a, hasher));

(globalThis as unknown as {
  addEventListener(type: "fetch", fn: (event: FetchEventLike) => void): void;
}).addEventListener("fetch", (event) => {
  event.respondWith(app.then((a) => a(event.request)));
});
