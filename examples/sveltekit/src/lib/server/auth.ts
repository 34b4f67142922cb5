// Every account flow of @portcullis/accounts over a libSQL database, built
// on the first request (so `vite build` needs no secret and opens no file),
// and the identity middleware for the app's own routes.
import { mkdirSync } from "node:fs";
import { env } from "$env/dynamic/private";
import { createClient } from "@libsql/client";
import { drizzle } from "drizzle-orm/libsql";
import type { RequestEvent } from "@sveltejs/kit";
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
  const appOrigin = env.APP_ORIGIN ?? "http://localhost:3000";
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
    // The hook passes the event: SvelteKit's client address (the socket's
    // with adapter-node); behind a proxy, its addresses in TRUSTED_PROXIES.
    clientAddress: (_req, event) => (event as RequestEvent).getClientAddress(),
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
