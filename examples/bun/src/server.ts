/**
 * portcullis on Bun: `Bun.serve`, users and sessions in one libSQL
 * database (a local file, or Turso): the SQL credential store for users,
 * and `LibsqlKV`, a key-value table in the same database, for the session
 * denylist and the login limit.
 *
 * Environment: `AUTH_SECRET` (at least 32 random bytes), `APP_ORIGIN` (the
 * public origin), `DATABASE_URL` (default `file:./data/app.db`; `libsql://…`
 * for Turso, with `DATABASE_AUTH_TOKEN`), `HOST`, `PORT` (default 3000).
 *
 * Run: `bun run src/server.ts` (README.md).
 *
 * @module
 */
import { mkdirSync } from "node:fs";
import process from "node:process";
import { createClient } from "@libsql/client";
import { drizzle } from "drizzle-orm/libsql";
import {
  KVSessionStore,
  SecretProvider,
  SessionManager,
} from "@portcullis/auth";
import { LibsqlKV } from "@portcullis/libsql-kv";
import { migrate, SQLCredentialStore } from "@portcullis/sql";
import { createApp } from "./app.ts";

/** The part of Bun's server the app uses: the client's address. */
interface BunServer {
  requestIP(req: Request): { address: string } | null;
}

declare const Bun: {
  serve(options: {
    hostname?: string;
    port: number;
    fetch: (req: Request, server: BunServer) => Promise<Response>;
  }): { port: number };
};

const env = process.env;
const port = Number(env.PORT ?? 3000);
const url = env.DATABASE_URL ?? "file:./data/app.db";
if (url === "file:./data/app.db") mkdirSync("data", { recursive: true });
const client = createClient({ url, authToken: env.DATABASE_AUTH_TOKEN });
const db = drizzle(client);
await migrate(db); // idempotent: CREATE … IF NOT EXISTS

const secret = SecretProvider.fromEnv("AUTH_SECRET", { env });
const kv = new LibsqlKV(client);
const app = createApp({
  sessions: new SessionManager({ secret, store: new KVSessionStore(kv) }),
  credentials: new SQLCredentialStore(db),
  kv,
  appOrigin: env.APP_ORIGIN ?? `http://localhost:${port}`,
  // Behind a proxy, read the header your proxy sets instead.
  clientAddress: (req, server) =>
    (server as BunServer).requestIP(req)?.address ?? null,
});

const server = Bun.serve({
  hostname: env.HOST ?? "0.0.0.0",
  port,
  fetch: (req, server) => app(req, server),
});
console.log(`Listening on port ${server.port}`);
