/**
 * The Hono example on Deno: sessions revocable in Deno KV, users in a
 * libSQL file (or Turso). On Bun or Workers, build the same app with that
 * runtime's stores (see those examples) and `export default app`.
 *
 * Environment: `AUTH_SECRET` (at least 32 random bytes), `APP_ORIGIN`,
 * `DATABASE_URL` (default `file:./data/app.db`), `DATABASE_AUTH_TOKEN`,
 * `KV_PATH` (default `./data/kv.sqlite3`), `PORT` (default 8000).
 *
 * Run: `deno task start` (README.md).
 *
 * @module
 */
import { createClient } from "@libsql/client";
import { drizzle } from "drizzle-orm/libsql";
import {
  DenoKV,
  KVSessionStore,
  SecretProvider,
  SessionManager,
} from "@portcullis/auth";
import { migrate, SQLCredentialStore } from "@portcullis/sql";
import { createHonoApp } from "./app.ts";

const env = Deno.env.toObject();
const port = Number(env.PORT ?? 8000);
if (!env.DATABASE_URL || !env.KV_PATH) {
  await Deno.mkdir("data", { recursive: true }); // the defaults live there
}
const db = drizzle(createClient({
  url: env.DATABASE_URL ?? "file:./data/app.db",
  authToken: env.DATABASE_AUTH_TOKEN,
}));
await migrate(db);
const secret = SecretProvider.fromEnv("AUTH_SECRET");
const kv = await DenoKV.open(env.KV_PATH ?? "./data/kv.sqlite3");
const app = createHonoApp({
  sessions: new SessionManager({ secret, store: new KVSessionStore(kv) }),
  credentials: new SQLCredentialStore(db),
  kv,
  // Hono on Deno hands the connection info over as `c.env`.
  clientAddress: (_req, env) =>
    (env as Deno.ServeHandlerInfo<Deno.NetAddr> | undefined)?.remoteAddr
      ?.hostname ?? null,
  appOrigin: env.APP_ORIGIN ?? `http://localhost:${port}`,
});

Deno.serve({ port }, app.fetch);
