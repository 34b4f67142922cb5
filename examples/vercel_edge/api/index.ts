/**
 * The reference app as one Vercel Edge Function: every path is rewritten to
 * `/api` (vercel.json), the session denylist, rate limits and notes live in
 * Upstash Redis, users and verification tokens in Turso over HTTP
 * (`@libsql/client/web`: no native code, no TCP).
 *
 * Environment: `AUTH_SECRET`, `APP_ORIGIN`, `UPSTASH_REDIS_REST_URL`,
 * `UPSTASH_REDIS_REST_TOKEN`, `KV_PREFIX`, `DATABASE_URL` (`libsql://…`),
 * `DATABASE_AUTH_TOKEN`, `RESEND_API_KEY`, `MAIL_FROM`. Password hashing is
 * PBKDF2 at 600000 iterations through WebCrypto (about 0.1 s of CPU per
 * login), which the edge runtime allows.
 *
 * @module
 */
import {
  KVSessionStore,
  SecretProvider,
  SessionManager,
} from "@portcullis/auth";
import { UpstashKV } from "@portcullis/upstash";
import {
  migrate,
  SQLCredentialStore,
  SQLVerificationTokenStore,
} from "@portcullis/sql";
import { drizzle } from "drizzle-orm/libsql/web";
import { type App, type AppDeps, createApp } from "../../app/app.ts";
import { mailerFromEnv } from "../../app/mailer.ts";

/** Vercel: run this function on the edge runtime. */
export const config = { runtime: "edge" };

/** The bindings the function reads. */
export type Env = Record<string, string | undefined>;

/**
 * Builds the app from the environment. Users and tokens come from Turso
 * unless `overrides` supplies both stores (tests only).
 *
 * @param env The environment, `process.env` on Vercel.
 * @param overrides Parts to use instead of the defaults.
 * @returns The app's handler.
 * @throws {TypeError} When a required variable is missing.
 */
export async function createEdgeApp(
  env: Env,
  overrides: Partial<AppDeps> = {},
): Promise<App> {
  for (
    const name of [
      "APP_ORIGIN",
      "UPSTASH_REDIS_REST_URL",
      "UPSTASH_REDIS_REST_TOKEN",
    ]
  ) {
    if (!env[name]) throw new TypeError(`${name} is not set`);
  }
  const secret = SecretProvider.fromEnv("AUTH_SECRET", { env });
  const kv = new UpstashKV({
    url: env.UPSTASH_REDIS_REST_URL!,
    token: env.UPSTASH_REDIS_REST_TOKEN!,
    prefix: env.KV_PREFIX ?? "",
  });
  let { credentials, tokens } = overrides;
  if (!credentials || !tokens) {
    if (!env.DATABASE_URL) {
      throw new TypeError("DATABASE_URL is not set: use libsql://… (Turso)");
    }
    const db = drizzle({
      connection: { url: env.DATABASE_URL, authToken: env.DATABASE_AUTH_TOKEN },
    });
    await migrate(db); // once per isolate; idempotent
    credentials = new SQLCredentialStore(db);
    tokens = new SQLVerificationTokenStore(db);
  }
  return createApp({
    sessions: new SessionManager({ secret, store: new KVSessionStore(kv) }),
    secret,
    credentials,
    tokens,
    kv,
    mailer: mailerFromEnv(env),
    appOrigin: env.APP_ORIGIN!,
    // Vercel sets x-real-ip; a client cannot override it there.
    clientAddress: (req) => req.headers.get("x-real-ip"),
    ...overrides,
  });
}

let app: Promise<App> | undefined;

/**
 * The Edge Function: builds the app once per isolate, then serves.
 *
 * @param req The request.
 * @returns The app's response.
 */
export default async function handler(req: Request): Promise<Response> {
  const env = (globalThis as { process?: { env: Env } }).process?.env ?? {};
  app ??= createEdgeApp(env).catch((error) => {
    app = undefined; // retry the start on the next request
    throw error;
  });
  return (await app)(req);
}
