/**
 * The app on Node ≥ 20 through `@portcullis/auth/adapters/node`:
 * `npm run build && npm start`. The modules are in `modules.ts`, the pages
 * and mails in `views/`. Users, single-use tokens and the session denylist
 * in one libSQL database (`DATABASE_URL`, default `file:./data/app.db`; a
 * Turso URL with `DATABASE_AUTH_TOKEN`), migrated on start. Settings:
 * `AUTH_SECRET` (at least 32 random bytes), `APP_ORIGIN` (the public
 * origin), `RESEND_API_KEY` and `MAIL_FROM` (without them each link is
 * logged on a line that starts with `[mail not sent]`), `HOST`, `PORT`
 * (default 3000), and each module's (see `modules.ts`).
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
import { migrate } from "@portcullis/sql";
import { accounts, mailerFromEnv } from "@portcullis/accounts";
import { modules } from "./modules.ts";
import { views } from "./views/mod.ts";

const env = process.env;
const port = Number(env.PORT ?? 3000);
const url = env.DATABASE_URL ?? "file:./data/app.db";
if (url === "file:./data/app.db") {
  mkdirSync("data", { recursive: true, mode: 0o700 });
}
const client = createClient({ url, authToken: env.DATABASE_AUTH_TOKEN });
const db = drizzle(client);
await migrate(db);
const secret = SecretProvider.fromEnv("AUTH_SECRET", { env });
const kv = new LibsqlKV(client);
const app = accounts({
  sessions: new SessionManager({ secret, store: new KVSessionStore(kv) }),
  secret,
  db,
  kv,
  mailer: mailerFromEnv(env),
  appOrigin: env.APP_ORIGIN ?? `http://localhost:${port}`,
  // The adapter passes the socket's address as Deno.serve does.
  clientAddress: (_req, info) =>
    (info as { remoteAddr?: { hostname?: string } } | undefined)?.remoteAddr
      ?.hostname ?? null,
  modules: modules(env),
  views,
});
const server = await serve(app.fetch, { port, hostname: env.HOST });
console.log(`Listening on port ${port}`);
for (const signal of ["SIGINT", "SIGTERM"] as const) {
  process.once(signal, () => server.close(() => process.exit(0)));
}
