/**
 * Conformance on Deno: the reference app wired for Deno and Deno Deploy
 * (tests/conformance/entries/deno.ts) in this process, behind `Deno.serve` on 127.0.0.1, with Deno KV and a
 * libSQL file in a scratch directory, and mail to the sink; TOTP, passkeys
 * and OpenID Connect (against oidc-provider) on.
 *
 * Usage: `deno run -A tests/conformance/run_deno.ts`
 *
 * @module
 */
import { createDenoApp } from "./entries/deno.ts";
import {
  CONFORMANCE_LIMITS,
  conformanceHasher,
  withHasherReport,
} from "./_hasher.ts";
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
} from "./_runner.ts";

const dir = await scratchDir("deno");
const mail = startMailSink();
const hasher = conformanceHasher();
const logs: string[] = [];
const port = freePort();
// localhost, not 127.0.0.1: WebAuthn refuses an IP address as the RP id.
const origin = `http://localhost:${port}`;
const secret = randomSecret();
const signIn = await startSignInServices(origin);
let server: Deno.HttpServer<Deno.NetAddr>;
try {
  const app = withHasherReport(
    (await createDenoApp({
      AUTH_SECRET: secret,
      APP_ORIGIN: origin,
      DATABASE_URL: `file:${dir}/app.db`,
      KV_PATH: `${dir}/kv.sqlite3`,
      RESEND_API_KEY: mail.apiKey,
      RESEND_BASE_URL: mail.url,
      ...signIn.env,
    }, {
      hasher,
      limits: CONFORMANCE_LIMITS,
      log: (line) => logs.push(line),
    })).fetch,
    hasher,
  );
  server = Deno.serve(
    { hostname: "127.0.0.1", port, onListen: () => {} },
    app,
  );
} catch (error) {
  await signIn.close();
  skipOrFail(`the Deno entry could not start: ${(error as Error).message}`);
}
const result = await runAndReport(
  {
    label: `Deno ${Deno.version.deno}`,
    about: [
      "entry tests/conformance/entries/deno.ts (createDenoApp: the reference app) in-process, Deno.serve",
      "stores: Deno KV (file) for sessions, limits and notes; libSQL file (drizzle-orm/libsql) for users, tokens and the sign-in methods' tables",
      signInAbout(signIn),
    ],
  },
  origin,
  mail,
  { secret, op: signIn.op, opError: signIn.opError },
);
await server.shutdown();
await mail.close();
await signIn.close();
await Deno.remove(dir, { recursive: true }).catch(() => {});
finish(result, logs.join("\n"));
