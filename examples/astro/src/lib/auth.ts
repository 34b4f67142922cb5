// Every account flow of @portcullis/accounts over a libSQL database, built
// on the first request (so `astro build` needs no secret and opens no file),
// and the identity middleware for the app's own pages.
import { mkdirSync } from "node:fs";
import { createClient } from "@libsql/client";
import { drizzle } from "drizzle-orm/libsql";
import {
  identityMiddleware,
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

async function build() {
  const env = process.env;
  const appOrigin = env.APP_ORIGIN ?? "http://localhost:4321";
  const secure = appOrigin.startsWith("https:");
  const url = env.DATABASE_URL ?? "file:./data/app.db";
  if (url === "file:./data/app.db") mkdirSync("data", { recursive: true });
  const client = createClient({ url, authToken: env.DATABASE_AUTH_TOKEN });
  const db = drizzle(client);
  await migrate(db); // idempotent
  const secret = SecretProvider.fromEnv("AUTH_SECRET", { env });
  const kv = new LibsqlKV(client);
  const sessionStore = new KVSessionStore(kv);
  const sessions = new SessionManager({ secret, store: sessionStore });
  const flows = accounts({
    sessions,
    sessionStore,
    secret,
    db,
    kv,
    mailer: mailerFromEnv(env), // RESEND_API_KEY, or each link logged
    appOrigin,
    cookieSecure: secure,
    // The catch-all passes Astro's `clientAddress` (see the guide: behind a
    // proxy only).
    clientAddress: (_req, address) =>
      typeof address === "string" ? address : null,
    modules: [
      password(),
      verification(),
      magicLink(),
      totp(),
      passkeys(),
      dpop(),
    ],
  });
  const identify = identityMiddleware(sessions, {
    cookie: { secure },
    crossOrigin: { appOrigin },
  });
  return { flows, identify };
}

let built: ReturnType<typeof build> | undefined;

/** The flows and the identity middleware, built on first use. */
export function portcullis(): ReturnType<typeof build> {
  return (built ??= build());
}
