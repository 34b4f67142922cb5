/**
 * portcullis on Node ≥ 20 through the `node:http` adapter
 * (`@portcullis/auth/adapters/node`): users and sessions in one libSQL
 * database (a local file, or Turso): the SQL credential store for users,
 * `LibsqlKV` (a key-value table in the same database) for the session
 * denylist and the login limit.
 *
 * Environment: `AUTH_SECRET` (at least 32 random bytes), `APP_ORIGIN` (the
 * public origin), `DATABASE_URL` (default `file:./data/app.db`; `libsql://…`
 * for Turso, with `DATABASE_AUTH_TOKEN`), `HOST`, `PORT` (default 3000).
 *
 * Run: `npm run build && npm start` (README.md).
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
import { serve } from "@portcullis/auth/adapters/node";
import { LibsqlKV } from "@portcullis/libsql-kv";
import { migrate, SQLCredentialStore } from "@portcullis/sql";
import { createApp } from "./app.ts";

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
  // The node:http adapter passes the socket address the way Deno.serve does.
  clientAddress: (_req, info) =>
    (info as { remoteAddr?: { hostname?: string } } | undefined)?.remoteAddr
      ?.hostname ?? null,
});

const server = await serve(app, { port, hostname: env.HOST });
const address = server.address();
console.log(
  `Listening on port ${
    typeof address === "object" && address !== null ? address.port : port
  } (set PORT to listen on another port, HOST for the interface)`,
);
for (const signal of ["SIGINT", "SIGTERM"] as const) {
  process.once(signal, () => server.close(() => process.exit(0)));
}
