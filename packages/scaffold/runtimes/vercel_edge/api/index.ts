/**
 * The app as a Vercel Edge Function: every path (`vercel.json` rewrites
 * them here). The modules are in `modules.ts`, the pages and mails in
 * `views/`. The session denylist, rate limits and the notes in Upstash
 * Redis (`UPSTASH_REDIS_REST_URL`, `UPSTASH_REDIS_REST_TOKEN`); users and
 * single-use tokens in Turso over HTTP (`DATABASE_URL`,
 * `DATABASE_AUTH_TOKEN`), migrated on the first request. Settings:
 * `AUTH_SECRET` (at least 32 random bytes), `APP_ORIGIN` (the public
 * origin), `RESEND_API_KEY` and `MAIL_FROM`, and each module's (see
 * `modules.ts`).
 *
 * @module
 */
import {
  KVSessionStore,
  SecretProvider,
  SessionManager,
} from "@portcullis/auth";
import { UpstashKV } from "@portcullis/upstash";
import { migrate } from "@portcullis/sql";
import { createClient } from "@libsql/client/web";
import { drizzle } from "drizzle-orm/libsql/web";
import { type Accounts, accounts, mailerFromEnv } from "@portcullis/accounts";
import { modules } from "../modules.ts";
import { views } from "../views/mod.ts";

/** Vercel: run this function on the edge runtime. */
export const config = { runtime: "edge" };

type Env = Record<string, string | undefined>;

async function build(env: Env): Promise<Accounts> {
  const secret = SecretProvider.fromEnv("AUTH_SECRET", { env });
  const kv = new UpstashKV({
    url: env.UPSTASH_REDIS_REST_URL ?? "",
    token: env.UPSTASH_REDIS_REST_TOKEN ?? "",
  });
  const db = drizzle(
    createClient({
      url: env.DATABASE_URL ?? "",
      authToken: env.DATABASE_AUTH_TOKEN,
    }),
  );
  await migrate(db);
  return accounts({
    sessions: new SessionManager({ secret, store: new KVSessionStore(kv) }),
    secret,
    db,
    kv,
    mailer: mailerFromEnv(env),
    appOrigin: env.APP_ORIGIN ?? "",
    // Vercel sets x-real-ip; a client cannot override it there.
    clientAddress: (req) => req.headers.get("x-real-ip"),
    modules: modules(env),
    views,
  });
}

let app: Promise<Accounts> | undefined;

/**
 * Answers every request (the app is built once per isolate).
 *
 * @param req The request.
 * @returns The app's answer.
 */
export default async function handler(req: Request): Promise<Response> {
  const env = (globalThis as unknown as { process: { env: Env } }).process.env;
  app ??= build(env).catch((error) => {
    app = undefined;
    throw error;
  });
  return (await app).fetch(req);
}
