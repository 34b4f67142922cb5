/**
 * Conformance on Node ≥ 20: tests/conformance/entries/node.ts (the
 * reference app behind the `node:http` adapter) bundled by esbuild with the
 * deno.json import map (npm packages left to node_modules), started with
 * `node`; a libSQL file for users and tokens, `LibsqlKV` in the same file
 * for the denylist, limits and notes. TOTP, passkeys and OpenID Connect
 * (against oidc-provider) on.
 *
 * Usage: `deno run -A tests/conformance/run_node.ts`
 *
 * @module
 */
import { bundle, stopBundler } from "./_import_map.ts";
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
  const out = await new Deno.Command("node", { args: ["--version"] }).output();
  version = new TextDecoder().decode(out.stdout).trim();
} catch (error) {
  skipOrFail(`node is not on PATH: ${(error as Error).message}`);
}
if (Number(version.replace(/^v/, "").split(".")[0]) < 20) {
  skipOrFail(`Node ${version} is older than 20`);
}

const dir = await scratchDir("node");
const outfile = `${dir}/server.mjs`;
const t0 = performance.now();
const bytes = await bundle({
  entry: "tests/conformance/entries/node.ts",
  outfile,
  format: "esm",
  platform: "node",
  externalPackages: true,
});
await stopBundler();
const bundleMs = Math.round(performance.now() - t0);

const mail = startMailSink();
const port = freePort();
// localhost, not 127.0.0.1: WebAuthn refuses an IP address as the RP id.
const origin = `http://localhost:${port}`;
const secret = randomSecret();
const signIn = await startSignInServices(origin);
const server = spawnServer(["node", outfile], {
  PORT: String(port),
  APP_ORIGIN: origin,
  AUTH_SECRET: secret,
  DATABASE_URL: `file:${dir}/app.db`,
  RESEND_API_KEY: mail.apiKey,
  RESEND_BASE_URL: mail.url,
  ...signIn.env,
});
let exited = false;
server.child.status.then(() => exited = true);
if (!(await waitForHttp(origin + "/", 20_000, () => !exited))) {
  await server.stop();
  await mail.close();
  await signIn.close();
  skipOrFail(`Node ${version} did not start the app`, server.output());
}
const result = await runAndReport(
  {
    label: `Node ${version}`,
    about: [
      `entry tests/conformance/entries/node.ts (the reference app) behind @portcullis/auth/adapters/node; esbuild bundle ${bytes} bytes in ${bundleMs} ms (npm packages external, from node_modules)`,
      "stores: LibsqlKV for sessions, limits and notes; libSQL file for users, tokens and the sign-in methods' tables (@libsql/client, native)",
      signInAbout(signIn),
    ],
  },
  origin,
  mail,
  { secret, op: signIn.op, opError: signIn.opError },
);
await server.stop();
await mail.close();
await signIn.close();
await Deno.remove(dir, { recursive: true }).catch(() => {});
finish(result, server.output());
