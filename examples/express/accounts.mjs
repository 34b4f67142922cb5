// @ts-check
// Every account flow of @portcullis/accounts, built once: users, tokens and
// events in a libSQL database (a local file, or Turso), sessions and limits
// in a key-value table of the same database, mail through Resend or logged.
import { mkdirSync } from "node:fs";
import { createClient } from "@libsql/client";
import { drizzle } from "drizzle-orm/libsql";
import {
  KVSessionStore,
  SecretProvider,
  SessionManager,
} from "@portcullis/auth";
import { LibsqlKV } from "@portcullis/libsql-kv";
import { migrate } from "@portcullis/sql";
import {
  accounts,
  dpop,
  magicLink,
  mailerFromEnv,
  password,
  verification,
} from "@portcullis/accounts";
import { totp } from "@portcullis/totp/accounts";
import { passkeys } from "@portcullis/passkeys/accounts";

const env = process.env;
export const port = Number(env.PORT ?? 3000);
export const origin = env.APP_ORIGIN ?? `http://localhost:${port}`;

const url = env.DATABASE_URL ?? "file:./data/app.db";
if (url === "file:./data/app.db") mkdirSync("data", { recursive: true });
const client = createClient({ url, authToken: env.DATABASE_AUTH_TOKEN });
const db = drizzle(client);
await migrate(db); // idempotent

const secret = SecretProvider.fromEnv("AUTH_SECRET", { env });
const kv = new LibsqlKV(client);
const sessionStore = new KVSessionStore(kv);
export const sessions = new SessionManager({ secret, store: sessionStore });

export const flows = accounts({
  sessions,
  sessionStore,
  secret,
  db,
  kv,
  mailer: mailerFromEnv(env), // RESEND_API_KEY, or each link logged
  appOrigin: origin,
  cookieSecure: origin.startsWith("https:"),
  // The Node adapter passes the socket's address; behind a proxy, its
  // addresses in TRUSTED_PROXIES (see the guide).
  clientAddress: (_req, info) =>
    /** @type {{ remoteAddr?: { hostname?: string } } | undefined} */ (info)
      ?.remoteAddr?.hostname ?? null,
  trustedProxies: env.TRUSTED_PROXIES,
  forwardedHeader: env.FORWARDED_HEADER,
  modules: [
    password(),
    verification(),
    magicLink(),
    totp(),
    passkeys(),
    dpop(),
  ],
});
