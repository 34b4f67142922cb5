/**
 * Conformance on Bun: `bun run` of tests/conformance/entries/bun.ts (the
 * reference app behind `Bun.serve`), with a libSQL file for users
 * and tokens and Upstash (the REST bridge in front of the local Redis) for
 * the denylist, limits and notes; without Redis, `LibsqlKV` in the same
 * file. Bun resolves the `@portcullis/*` packages through node_modules,
 * linked here as an install would (`npm install` provides the drivers).
 * TOTP, passkeys and OpenID Connect (against oidc-provider) on.
 *
 * Usage: `deno run -A tests/conformance/run_bun.ts`
 *
 * @module
 */
import { startUpstashBridge } from "../support/upstash_bridge.ts";
import { tcpReachable } from "../support/services.ts";
import { linkPackageForBun, ROOT } from "./_import_map.ts";
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

const bun = `${ROOT}/node_modules/.bin/bun`;
let version = "";
try {
  const out = await new Deno.Command(bun, { args: ["--version"] }).output();
  version = new TextDecoder().decode(out.stdout).trim();
  if (!out.success) throw new Error("bun --version failed");
} catch (error) {
  skipOrFail(
    `Bun is not installed (run npm install): ${(error as Error).message}`,
  );
}
await linkPackageForBun();

const dir = await scratchDir("bun");
const mail = startMailSink();
const redis = await tcpReachable(6379);
const bridge = redis ? startUpstashBridge() : null;
const port = freePort();
// localhost, not 127.0.0.1: WebAuthn refuses an IP address as the RP id.
const origin = `http://localhost:${port}`;
const secret = randomSecret();
const signIn = await startSignInServices(origin);
const env: Record<string, string> = {
  PORT: String(port),
  APP_ORIGIN: origin,
  AUTH_SECRET: secret,
  DATABASE_URL: `file:${dir}/app.db`,
  RESEND_API_KEY: mail.apiKey,
  RESEND_BASE_URL: mail.url,
  ...signIn.env,
};
if (bridge) {
  env.UPSTASH_REDIS_REST_URL = bridge.url;
  env.UPSTASH_REDIS_REST_TOKEN = bridge.token;
  env.KV_PREFIX = `conformance:${crypto.randomUUID()}:`;
}
const server = spawnServer(
  [bun, "run", "--no-install", "tests/conformance/entries/bun.ts"],
  env,
);
let exited = false;
server.child.status.then(() => exited = true);
if (!(await waitForHttp(origin + "/", 20_000, () => !exited))) {
  await server.stop();
  await mail.close();
  await bridge?.close();
  await signIn.close();
  skipOrFail(`Bun ${version} did not start the app`, server.output());
}
const result = await runAndReport(
  {
    label: `Bun ${version}`,
    about: [
      "entry tests/conformance/entries/bun.ts (the reference app) under `bun run`, Bun.serve",
      bridge
        ? "stores: Upstash (@upstash/redis through the REST bridge to the local Redis) for sessions, limits and notes; libSQL file for users and tokens"
        : "stores: LibsqlKV and libSQL file (Redis is not reachable on 127.0.0.1:6379, so Upstash is not exercised)",
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
await bridge?.close();
await Deno.remove(dir, { recursive: true }).catch(() => {});
finish(result, server.output());
