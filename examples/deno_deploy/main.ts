/**
 * portcullis on Deno and Deno Deploy: `Deno.serve`, sessions revocable in
 * Deno KV, users in libSQL (Turso on Deploy, a local file in development).
 *
 * Environment: `AUTH_SECRET` (at least 32 random bytes), `APP_ORIGIN` (the
 * public origin), `DATABASE_URL` (`libsql://…` for Turso, default
 * `file:./data/app.db`), `DATABASE_AUTH_TOKEN`, `KV_PATH` (local runs only;
 * Deploy's KV needs no path), `PORT` (default 8000).
 *
 * Run: `deno task start` (README.md).
 *
 * @module
 */
import {
  DenoKV,
  KVSessionStore,
  SecretProvider,
  SessionManager,
} from "@portcullis/auth";
import { migrate, SQLCredentialStore } from "@portcullis/sql";
import { createApp } from "./app.ts";

const env = Deno.env.toObject();
const port = Number(env.PORT ?? 8000);
const url = env.DATABASE_URL ?? "file:./data/app.db";
if (url.startsWith("file:./data/")) {
  await Deno.mkdir("data", { recursive: true });
}
// A file needs libSQL's native driver (plain Deno); Deploy reaches Turso
// over HTTP with the web client, which loads no native code.
const { drizzle } = url.startsWith("file:")
  ? await import("drizzle-orm/libsql")
  : await import("drizzle-orm/libsql/web");
const db = drizzle({ connection: { url, authToken: env.DATABASE_AUTH_TOKEN } });
await migrate(db); // idempotent: CREATE … IF NOT EXISTS

const secret = SecretProvider.fromEnv("AUTH_SECRET");
const kv = await DenoKV.open(env.KV_PATH);
const app = createApp({
  sessions: new SessionManager({ secret, store: new KVSessionStore(kv) }),
  credentials: new SQLCredentialStore(db),
  kv,
  appOrigin: env.APP_ORIGIN ?? `http://localhost:${port}`,
  // Deno.serve passes the connection as the handler's second argument.
  clientAddress: (_req, info) =>
    (info as Deno.ServeHandlerInfo<Deno.NetAddr> | undefined)?.remoteAddr
      ?.hostname ?? null,
});

// Deno Deploy ignores the port; locally PORT (default 8000) applies.
Deno.serve({ port }, app);
