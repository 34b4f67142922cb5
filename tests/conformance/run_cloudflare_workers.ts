/**
 * Conformance on Cloudflare's runtime: tests/conformance/entries/cloudflare_workers.ts
 * (the reference app as a Worker) bundled by esbuild as a module Worker and run in
 * `workerd` through Miniflare 4, with a local KV namespace (`AUTH_KV`) and
 * a local D1 database (`DB`) as bindings. TOTP, passkeys and OpenID Connect
 * on: the Worker fetches the OpenID Provider (oidc-provider) at 127.0.0.1,
 * as it posts to the mail sink there (Miniflare lets workerd reach local
 * addresses).
 *
 * The build first installs a stand-in for production's PBKDF2 cap
 * (_workers_pbkdf2_cap.ts), so the full-strength check proves that the
 * Worker's hasher falls back to its WebAssembly route (the module imported
 * as wrangler imports it) and still hashes at 600000 iterations, and
 * measures that route.
 *
 * Miniflare runs under Deno here: it asks for Node ≥ 22, and this machine's
 * Node is 20.
 *
 * Usage: `deno run -A tests/conformance/run_cloudflare_workers.ts`
 *
 * @module
 */
import { Miniflare } from "miniflare";
import { bundle, stopBundler } from "./_import_map.ts";
import {
  finish,
  freePort,
  randomSecret,
  runAndReport,
  scratchDir,
  signInAbout,
  skipOrFail,
  startMailSink,
  startSignInServices,
  waitForHttp,
} from "./_runner.ts";

const dir = await scratchDir("workers");
const outfile = `${dir}/worker.js`;
const t0 = performance.now();
const bytes = await bundle({
  entry: "tests/conformance/entries/cloudflare_workers.ts",
  outfile,
  format: "esm",
  platform: "browser",
  conditions: ["workerd", "worker", "browser"],
  // `.wasm` imports stay modules next to the bundle, as wrangler does.
  loader: { ".wasm": "copy" },
});
await stopBundler();
const bundleMs = Math.round(performance.now() - t0);

const mail = startMailSink();
const port = freePort();
// localhost, not 127.0.0.1: WebAuthn refuses an IP address as the RP id.
// workerd still listens on 127.0.0.1 only.
const origin = `http://localhost:${port}`;
const secret = randomSecret();
const signIn = await startSignInServices(origin);
let mf: Miniflare | undefined;
try {
  mf = new Miniflare({
    modules: true,
    scriptPath: outfile,
    modulesRules: [{ type: "CompiledWasm", include: ["**/*.wasm"] }],
    compatibilityDate: "2025-09-01",
    host: "127.0.0.1",
    port,
    kvNamespaces: ["AUTH_KV"],
    d1Databases: ["DB"],
    bindings: {
      AUTH_SECRET: secret,
      APP_ORIGIN: origin,
      RESEND_API_KEY: mail.apiKey,
      RESEND_BASE_URL: mail.url,
      ...signIn.env,
    },
  });
  await mf.ready;
} catch (error) {
  await mf?.dispose().catch(() => {});
  await mail.close();
  await signIn.close();
  skipOrFail(
    `Miniflare (workerd) could not start: ${(error as Error).message}`,
  );
}
if (!(await waitForHttp(origin + "/", 20_000))) {
  await mf!.dispose();
  await mail.close();
  await signIn.close();
  skipOrFail("workerd did not answer");
}
const result = await runAndReport(
  {
    label: "workerd (Miniflare 4)",
    about: [
      `entry tests/conformance/entries/cloudflare_workers.ts (the reference app) as a module Worker; esbuild bundle ${bytes} bytes in ${bundleMs} ms`,
      "stores: Workers KV binding (CloudflareKV) for sessions, limits and notes; D1 binding through drizzle-orm/d1 (SQLCredentialStore, SQLVerificationTokenStore) for users and tokens",
      "production PBKDF2 cap enforced by a stand-in: WebCrypto PBKDF2 above 100000 iterations throws NotSupportedError",
      signInAbout(signIn),
    ],
    expectRoute: "wasm",
  },
  origin,
  mail,
  { secret, op: signIn.op, opError: signIn.opError },
);
const cap = await (await fetch(origin + "/__conformance/pbkdf2-cap")).json();
console.log(
  `# PBKDF2 cap stand-in refused ${cap.refusals} WebCrypto derivation(s)`,
);
if (cap.refusals < 1) {
  console.log(
    "FAIL - the PBKDF2 cap stand-in never refused: the fallback was not exercised",
  );
  result.failed++;
} else {
  console.log(
    "ok - the PBKDF2 cap stand-in refused 600000 and the hasher fell back",
  );
  result.passed++;
}
await mf!.dispose();
await mail.close();
await signIn.close();
await Deno.remove(dir, { recursive: true }).catch(() => {});
finish(result);
