/**
 * The reference app on Bun: `Bun.serve`, users and verification tokens in
 * libSQL (a local file, or Turso), and the session denylist, rate limits
 * and notes in Upstash Redis when `UPSTASH_REDIS_REST_URL` is set, else in
 * a key-value table of the same libSQL database (`LibsqlKV`).
 *
 * Bindings: `AUTH_SECRET`, `APP_ORIGIN`, `DATABASE_URL` (default
 * `file:./data/app.db`), `DATABASE_AUTH_TOKEN`, `UPSTASH_REDIS_REST_URL`,
 * `UPSTASH_REDIS_REST_TOKEN`, `KV_PREFIX`, `RESEND_API_KEY`, `MAIL_FROM`,
 * `HOST`, `PORT` (default 3000).
 *
 * Run: `bun run examples/bun/server.ts` (README.md, "Bun").
 *
 * @module
 */
import process from "node:process";
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

/** The part of Bun's server the app uses: the client's address. */
export interface BunServerLike {
  /** The peer address of a request. */
  requestIP(req: Request): { address: string } | null;
}

declare const Bun: {
  serve(options: {
    hostname?: string;
    port: number;
    fetch: (req: Request, server: BunServerLike) => Promise<Response>;
  }): { port: number };
};

/**
 * Opens the stores named by the bindings and builds the app.
 *
 * @param env The bindings, usually `process.env`.
 * @param overrides Parts to use instead of the defaults (tests only).
 * @returns The app's handler; pass Bun's `server` as its second argument.
 * @throws {TypeError} When `AUTH_SECRET` or `APP_ORIGIN` is missing.
 */
export async function createBunApp(
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
  const prefix = env.KV_PREFIX ?? "";
  const kv: KeyValueStore = env.UPSTASH_REDIS_REST_URL
    ? new UpstashKV({
      url: env.UPSTASH_REDIS_REST_URL,
      token: env.UPSTASH_REDIS_REST_TOKEN ?? "",
      prefix,
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
    clientAddress: (req, server) =>
      (server as BunServerLike).requestIP(req)?.address ?? null,
    ...overrides,
  });
}

if (import.meta.main) {
  const app = await createBunApp(process.env);
  const server = Bun.serve({
    hostname: process.env.HOST ?? "0.0.0.0",
    port: Number(process.env.PORT ?? 3000),
    fetch: (req, server) => app(req, server),
  });
  console.log(`Listening on port ${server.port}`);
}
