/**
 * The reference app's stores on Node ≥ 20: users and verification tokens
 * in libSQL (a local file, or Turso), and the session denylist, rate limits
 * and notes in Upstash when `UPSTASH_REDIS_REST_URL` is set, else in a
 * key-value table of the same database (`LibsqlKV`). `server.ts` serves it.
 *
 * Bindings: `AUTH_SECRET`, `APP_ORIGIN`, `DATABASE_URL` (default
 * `file:./data/app.db`), `DATABASE_AUTH_TOKEN`, `UPSTASH_REDIS_REST_URL`,
 * `UPSTASH_REDIS_REST_TOKEN`, `KV_PREFIX`, `RESEND_API_KEY`, `MAIL_FROM`.
 *
 * @module
 */
import { createClient } from "@libsql/client";
import { drizzle } from "drizzle-orm/libsql";
import {
  type KeyValueStore,
  KVSessionStore,
  SecretProvider,
  SessionManager,
} from "@portcullis/auth";
import { LibsqlKV } from "@portcullis/libsql-kv";
import { UpstashKV } from "@portcullis/upstash";
import {
  migrate,
  SQLCredentialStore,
  SQLVerificationTokenStore,
} from "@portcullis/sql";
import { type App, type AppDeps, createApp } from "../app/app.ts";
import { mailerFromEnv } from "../app/mailer.ts";

/**
 * Opens the stores named by the bindings and builds the app.
 *
 * @param env The bindings, usually `process.env`.
 * @param overrides Parts to use instead of the defaults (tests only).
 * @returns The app's handler.
 * @throws {TypeError} When `AUTH_SECRET` or `APP_ORIGIN` is missing.
 */
export async function createNodeApp(
  env: Record<string, string | undefined>,
  overrides: Partial<AppDeps> = {},
): Promise<App> {
  if (!env.APP_ORIGIN) {
    throw new TypeError(
      "APP_ORIGIN is not set: use the public https://… origin",
    );
  }
  const secret = SecretProvider.fromEnv("AUTH_SECRET", { env });
  const client = createClient({
    url: env.DATABASE_URL ?? "file:./data/app.db",
    authToken: env.DATABASE_AUTH_TOKEN,
  });
  const db = drizzle(client);
  await migrate(db);
  const kv: KeyValueStore = env.UPSTASH_REDIS_REST_URL
    ? new UpstashKV({
      url: env.UPSTASH_REDIS_REST_URL,
      token: env.UPSTASH_REDIS_REST_TOKEN ?? "",
      prefix: env.KV_PREFIX ?? "",
    })
    : new LibsqlKV(client);
  return createApp({
    sessions: new SessionManager({ secret, store: new KVSessionStore(kv) }),
    secret,
    credentials: new SQLCredentialStore(db),
    tokens: new SQLVerificationTokenStore(db),
    kv,
    mailer: mailerFromEnv(env),
    appOrigin: env.APP_ORIGIN,
    // The node:http adapter passes the socket address the way Deno.serve does.
    clientAddress: (_req, info) =>
      (info as { remoteAddr?: { hostname?: string } } | undefined)?.remoteAddr
        ?.hostname ?? null,
    ...overrides,
  });
}
