// Every account flow of @portcullis/accounts in an Elysia app on Bun, beside
// a page of the app's own: users, tokens and events in a libSQL file (or
// Turso), sessions and limits in a key-value table of the same database,
// mail through Resend or logged. Run: `bun run src/index.ts`.
import { mkdirSync } from "node:fs";
import { Elysia } from "elysia";
import { createClient } from "@libsql/client";
import { drizzle } from "drizzle-orm/libsql";
import {
  currentUser,
  identityMiddleware,
  KVSessionStore,
  requireAuth,
  SecretProvider,
  SessionManager,
} from "@portcullis/auth";
import { escapeHtml } from "@portcullis/auth/http";
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
const port = Number(env.PORT ?? 3000);
const appOrigin = env.APP_ORIGIN ?? `http://localhost:${port}`;
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
  // The catch-all below passes Bun's address of the connection; behind a
  // proxy, its addresses in TRUSTED_PROXIES (see the guide).
  clientAddress: (_req, address) =>
    typeof address === "string" ? address : null,
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
const signedIn = requireAuth(); // browsers: 303 to /login; others: 401

new Elysia()
  // A page of the app's own: identity, the gate, then the user's record.
  .get(
    "/dashboard",
    ({ request }) =>
      identify(request, () =>
        signedIn(request, async () => {
          const user = await flows.context.credentials.findById(
            currentUser(request) ?? "",
          );
          return new Response(
            `<!doctype html><title>Dashboard</title><p>Signed in as ${
              escapeHtml(user?.email ?? "")
            }.</p><p><a href="/account">Your account</a></p>`,
            { headers: { "content-type": "text/html; charset=utf-8" } },
          );
        })),
  )
  // Every account flow: /login, /register, /verify, /password/…, /account,
  // … with the body unread (`parse: "none"`) and the client's address.
  .all(
    "/*",
    ({ request, server }) =>
      flows.fetch(request, server?.requestIP(request)?.address ?? null),
    { parse: "none" },
  )
  .listen({ port, hostname: env.HOST ?? "127.0.0.1" });

console.log(`Listening on ${appOrigin} (port ${port})`);
