/**
 * What the Workers conformance run bundles and loads into workerd: the
 * production PBKDF2 cap stand-in first, then the reference app
 * (examples/app) as a module Worker, built once per isolate from the
 * bindings: the session denylist, rate limits and notes in Workers KV
 * (`AUTH_KV`), users and verification tokens in D1 (`DB`) through
 * drizzle's D1 driver. Its hasher is the conformance hasher whose
 * full-strength side is the Workers hasher of `@portcullis/hashers`
 * (`Pbkdf2WasmHasher`): PBKDF2 in the imported WebAssembly module where
 * WebCrypto refuses 600000 iterations. The
 * sign-in methods beside the password as `main.ts` builds them
 * (`modules.ts` over the string bindings: TOTP, passkeys, OpenID
 * Connect when `OIDC_ISSUER` is set), their tables in D1.
 *
 * @module
 */
import { refusals } from "../_workers_pbkdf2_cap.ts";
import {
  KVSessionStore,
  SecretProvider,
  SessionManager,
} from "@portcullis/auth";
import { Pbkdf2WasmHasher } from "@portcullis/hashers/pbkdf2-wasm";
import { CloudflareKV, type KVNamespaceLike } from "@portcullis/cloudflare";
import { migrate } from "@portcullis/sql";
import { type AnyD1Database, drizzle } from "drizzle-orm/d1";
// @ts-ignore: bundled with a `.wasm` copy loader, the default export is a compiled WebAssembly.Module (as wrangler imports it)
import pbkdf2Wasm from "@portcullis/hashers/pbkdf2-sha256.wasm";
import { type Accounts, accounts, mailerFromEnv } from "@portcullis/accounts";
import { modules } from "../../../examples/app/modules.ts";
import {
  CONFORMANCE_LIMITS,
  conformanceHasher,
  withHasherReport,
} from "../_hasher.ts";
import { deviceBoundFromEnv } from "../_device_bound.ts";

interface Env {
  AUTH_SECRET: string;
  APP_ORIGIN: string;
  AUTH_KV: KVNamespaceLike;
  DB: AnyD1Database;
  RESEND_API_KEY?: string;
  RESEND_BASE_URL?: string;
  /** The sign-in methods' settings (`TOTP`, `PASSKEYS`, `OIDC_*`). */
  [setting: string]: unknown;
}

/** The bindings that are plain strings (vars and secrets), by name. */
function settings(env: Env): Record<string, string | undefined> {
  return Object.fromEntries(
    Object.entries(env).filter(([, v]) => typeof v === "string"),
  ) as Record<string, string>;
}

const hasher = conformanceHasher(
  new Pbkdf2WasmHasher({ wasmModule: pbkdf2Wasm as WebAssembly.Module }),
);
const apps = new WeakMap<object, Promise<Accounts>>();

async function build(env: Env): Promise<Accounts> {
  const secret = SecretProvider.fromEnv("AUTH_SECRET", { env: { ...env } });
  const db = drizzle(env.DB);
  await migrate(db);
  const kv = new CloudflareKV(env.AUTH_KV);
  return accounts({
    sessions: new SessionManager({ secret, store: new KVSessionStore(kv) }),
    secret,
    db,
    kv,
    mailer: mailerFromEnv({
      RESEND_API_KEY: env.RESEND_API_KEY,
      RESEND_BASE_URL: env.RESEND_BASE_URL,
    }),
    appOrigin: env.APP_ORIGIN,
    clientAddress: (req) => req.headers.get("cf-connecting-ip"),
    hasher,
    limits: CONFORMANCE_LIMITS,
    deviceBound: deviceBoundFromEnv(env),
    modules: modules(settings(env)),
  });
}

export default {
  async fetch(req: Request, env: Env, ctx: unknown): Promise<Response> {
    if (new URL(req.url).pathname === "/__conformance/pbkdf2-cap") {
      return Response.json({ refusals: refusals.count });
    }
    let app = apps.get(env);
    if (app === undefined) {
      app = build(env);
      app.catch(() => apps.delete(env));
      apps.set(env, app);
    }
    return withHasherReport((await app).fetch, hasher)(
      req,
      env,
      ctx,
    );
  },
};
