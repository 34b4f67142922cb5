/**
 * The reference app's stores on Cloudflare Workers, built once per isolate
 * from the bindings: the session denylist, rate limits and notes in Workers
 * KV (`AUTH_KV`), users and verification tokens in D1 (`DB`) through
 * drizzle's D1 driver. `index.ts` is the Worker.
 *
 * Workers KV is eventually consistent: a sign-out or revocation can take
 * about 60 s to reach other locations (README.md, "Cloudflare Workers").
 *
 * @module
 */
import {
  KVSessionStore,
  Pbkdf2Hasher,
  SecretProvider,
  SessionManager,
} from "@portcullis/auth";
import { pbkdf2WasmModule } from "./pbkdf2_wasm.ts";
import { CloudflareKV, type KVNamespaceLike } from "@portcullis/cloudflare";
import {
  migrate,
  SQLCredentialStore,
  SQLVerificationTokenStore,
} from "@portcullis/sql";
import { type AnyD1Database, drizzle } from "drizzle-orm/d1";
import { type App, type AppDeps, createApp } from "../../app/app.ts";
import { mailerFromEnv } from "../../app/mailer.ts";

/** The Worker's bindings (wrangler.toml, plus secrets). */
export interface Env {
  /** Secret: at least 32 random bytes (`wrangler secret put AUTH_SECRET`). */
  AUTH_SECRET: string;
  /** The public origin, `https://…`. */
  APP_ORIGIN: string;
  /** Workers KV namespace for the denylist, limits and notes. */
  AUTH_KV: KVNamespaceLike;
  /** D1 database for users and verification tokens. */
  DB: AnyD1Database;
  /** Secret: Resend API key; without it, links are logged. */
  RESEND_API_KEY?: string;
  /** The sender address. */
  MAIL_FROM?: string;
  /** Resend's API base URL; tests point it at a local sink. */
  RESEND_BASE_URL?: string;
}

const apps = new WeakMap<object, Promise<App>>();

/**
 * The app for these bindings, built on first use in an isolate (the `env`
 * object is the same for every request an isolate serves).
 *
 * @param env The bindings.
 * @param overrides Parts to use instead of the defaults (tests only).
 * @returns The app's handler.
 */
export function appFor(
  env: Env,
  overrides: Partial<AppDeps> = {},
): Promise<App> {
  let app = apps.get(env);
  if (app === undefined) {
    app = build(env, overrides);
    app.catch(() => apps.delete(env)); // a failed start is retried
    apps.set(env, app);
  }
  return app;
}

async function build(env: Env, overrides: Partial<AppDeps>): Promise<App> {
  const secret = SecretProvider.fromEnv("AUTH_SECRET", { env: { ...env } });
  const db = drizzle(env.DB);
  await migrate(db); // idempotent; or apply the migration with wrangler once
  const kv = new CloudflareKV(env.AUTH_KV);
  return createApp({
    sessions: new SessionManager({ secret, store: new KVSessionStore(kv) }),
    secret,
    credentials: new SQLCredentialStore(db),
    tokens: new SQLVerificationTokenStore(db),
    kv,
    mailer: mailerFromEnv({
      RESEND_API_KEY: env.RESEND_API_KEY,
      MAIL_FROM: env.MAIL_FROM,
      RESEND_BASE_URL: env.RESEND_BASE_URL,
    }),
    appOrigin: env.APP_ORIGIN,
    clientAddress: (req) => req.headers.get("cf-connecting-ip"),
    // Production Workers refuse WebCrypto PBKDF2 above 100000 iterations:
    // the hasher then derives the same standard 600000-iteration PBKDF2 in
    // this imported WebAssembly module (about 3× WebCrypto's time).
    hasher: new Pbkdf2Hasher({ wasmModule: pbkdf2WasmModule }),
    ...overrides,
  });
}
