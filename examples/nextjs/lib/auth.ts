// The Node side, built once per process on first use (not while `next build`
// collects pages): every account flow of @portcullis/accounts over a libSQL
// database, and `auth` for pages, route handlers and server actions of the
// app's own. middleware.ts (edge runtime) does not import this file.
import { mkdirSync } from "node:fs";
import { headers } from "next/headers";
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
import { nextAuth } from "@portcullis/next";

export const appOrigin = process.env.APP_ORIGIN ?? "http://localhost:3000";
const secure = appOrigin.startsWith("https:");

async function build() {
  const env = process.env;
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
    // A route handler gets no socket: the client's address is the last
    // entry of X-Forwarded-For, which `next start` sets to the socket's
    // address when the request has none, and Vercel or a proxy overwrites
    // (see the guide: never let clients reach `next start` itself).
    trustedProxies: env.TRUSTED_PROXIES ?? "1",
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
  const auth = nextAuth(
    identityMiddleware(sessions, {
      cookie: { secure },
      crossOrigin: { appOrigin },
    }),
    { headers, appOrigin, users: flows.context.credentials },
  );
  return { flows, auth };
}

// Next may load this module once per bundle layer (route handlers, server
// components and actions are compiled apart): one instance per process.
const shared = globalThis as {
  __portcullis?: ReturnType<typeof build>;
};

/** The flows and `auth`, built on first use. */
export function portcullis(): ReturnType<typeof build> {
  return (shared.__portcullis ??= build());
}
