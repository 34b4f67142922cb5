/**
 * portcullis as one Vercel Edge Function: every path is rewritten to `/api`
 * (vercel.json); the session denylist and the login limit live in Upstash
 * Redis, users in Turso over HTTP (`drizzle-orm/libsql/web`: no native
 * code, no TCP, which the edge runtime does not have).
 *
 * Environment: `AUTH_SECRET`, `APP_ORIGIN`, `UPSTASH_REDIS_REST_URL`,
 * `UPSTASH_REDIS_REST_TOKEN`, `DATABASE_URL` (`libsql://…`),
 * `DATABASE_AUTH_TOKEN`. Passwords: PBKDF2-SHA256 at 600000 iterations
 * through WebCrypto, which the edge runtime allows.
 *
 * @module
 */
import {
  KVSessionStore,
  SecretProvider,
  SessionManager,
} from "@portcullis/auth";
import { migrate, SQLCredentialStore } from "@portcullis/sql";
import { UpstashKV } from "@portcullis/upstash";
import { drizzle } from "drizzle-orm/libsql/web";
import { createApp } from "../src/app.ts";

/** Vercel: run this function on the edge runtime. */
export const config = { runtime: "edge" };

type Env = Record<string, string | undefined>;
type App = ReturnType<typeof createApp>;

async function build(env: Env): Promise<App> {
  for (const name of ["APP_ORIGIN", "DATABASE_URL", "UPSTASH_REDIS_REST_URL"]) {
    if (!env[name]) throw new TypeError(`${name} is not set`);
  }
  const secret = SecretProvider.fromEnv("AUTH_SECRET", { env });
  const kv = new UpstashKV({
    url: env.UPSTASH_REDIS_REST_URL!,
    token: env.UPSTASH_REDIS_REST_TOKEN ?? "",
  });
  const db = drizzle({
    connection: { url: env.DATABASE_URL!, authToken: env.DATABASE_AUTH_TOKEN },
  });
  await migrate(db); // once per isolate; idempotent
  return createApp({
    sessions: new SessionManager({ secret, store: new KVSessionStore(kv) }),
    credentials: new SQLCredentialStore(db),
    kv,
    appOrigin: env.APP_ORIGIN!,
    // Vercel sets x-real-ip; a client cannot override it there.
    clientAddress: (req) => req.headers.get("x-real-ip"),
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
  app ??= build(env).catch((error) => {
    app = undefined; // retry the start on the next request
    throw error;
  });
  return (await app)(req);
}
