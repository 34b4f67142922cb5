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
 * oidc-provider) on.
 *
 * Usage: `deno run -A tests/conformance/run_vercel_edge.ts`
 *
 * @module
 */
import { startUpstashBridge } from "../support/upstash_bridge.ts";
import { startLibsqlHttpBridge } from "../support/libsql_http_bridge.ts";
import { tcpReachable } from "../support/services.ts";
import { bundle, ROOT, stopBundler } from "./_import_map.ts";
import {
  finish,
  freePort,
  randomSecret,
  runAndReport,
  scratchDir,
  signInAbout,
  skipOrFail,
  spawnServer,
  startMailSink,
  startSignInServices,
  waitForHttp,
} from "./_runner.ts";

let version = "";
try {
  const pkg = JSON.parse(
    await Deno.readTextFile(`${ROOT}/node_modules/edge-runtime/package.json`),
  );
  version = pkg.version;
} catch {
  skipOrFail("npm edge-runtime is not installed (run npm install)");
}
if (!(await tcpReachable(6379))) {
  skipOrFail(
    "Redis is not reachable on 127.0.0.1:6379 (the Edge Function's store is Upstash)",
  );
}

const dir = await scratchDir("edge");
const outfile = `${dir}/edge.js`;
const t0 = performance.now();
const bytes = await bundle({
  entry: "tests/conformance/entries/vercel_edge.ts",
  outfile,
  format: "iife",
  platform: "browser",
  conditions: ["edge-light", "worker", "browser"],
});
await stopBundler();
const bundleMs = Math.round(performance.now() - t0);

const mail = startMailSink();
const bridge = startUpstashBridge();
const turso = await startLibsqlHttpBridge();
const port = freePort();
// localhost, not 127.0.0.1: WebAuthn refuses an IP address as the RP id.
const origin = `http://localhost:${port}`;
const secret = randomSecret();
const signIn = await startSignInServices(origin);
const server = spawnServer(
  ["node", "tests/conformance/edge_host.mjs", outfile],
  {
    PORT: String(port),
    EDGE_ENV: JSON.stringify({
      APP_ORIGIN: origin,
      AUTH_SECRET: secret,
      UPSTASH_REDIS_REST_URL: bridge.url,
      UPSTASH_REDIS_REST_TOKEN: bridge.token,
      DATABASE_URL: turso.url,
      DATABASE_AUTH_TOKEN: turso.token,
      KV_PREFIX: `conformance:${crypto.randomUUID()}:`,
      RESEND_API_KEY: mail.apiKey,
      RESEND_BASE_URL: mail.url,
      ...signIn.env,
    }),
  },
);
let exited = false;
server.child.status.then(() => exited = true);
if (!(await waitForHttp(origin + "/", 20_000, () => !exited))) {
  await server.stop();
  await mail.close();
  await bridge.close();
  await turso.close();
  await signIn.close();
  skipOrFail(`edge-runtime ${version} did not start the app`, server.output());
}
const result = await runAndReport(
  {
    label: `Vercel edge-runtime ${version}`,
    about: [
      `entry tests/conformance/entries/vercel_edge.ts (the reference app as an Edge Function) in npm edge-runtime ${version} on Node, string/WASM code generation refused; classic-script bundle ${bytes} bytes in ${bundleMs} ms`,
      "stores: Upstash (REST bridge to the local Redis) for sessions, limits and notes",
      "users and tokens: SQLCredentialStore/SQLVerificationTokenStore over drizzle-orm/libsql/web and @libsql/client/web, Hrana over HTTP to the libSQL bridge (a real local libSQL file; no sqld server here); the sign-in methods' SQL stores likewise",
      signInAbout(signIn),
    ],
  },
  origin,
  mail,
  { secret, op: signIn.op, opError: signIn.opError },
);
await server.stop();
await mail.close();
await signIn.close(); // the OpenID Provider's process
await bridge.close();
const sql = turso.stats();
await turso.close();
console.log(
  `libSQL bridge: ${sql.httpRequests} HTTP requests, ${sql.statements} statements`,
);
await Deno.remove(dir, { recursive: true }).catch(() => {});
finish(result, server.output());
