/**
 * Every account flow of `@portcullis/accounts` in a Hono app on Deno, beside
 * a page of the app's own: users, tokens and events in a libSQL file (or
 * Turso), sessions and limits in Deno KV, mail through Resend or logged.
 *
 * Run: `deno task start` (README.md).
 *
 * @module
 */
import { Hono } from "hono";
import { createClient } from "@libsql/client";
import { drizzle } from "drizzle-orm/libsql";
import {
  currentUser,
  DenoKV,
  identityMiddleware,
  KVSessionStore,
  requireAuth,
  SecretProvider,
  SessionManager,
} from "@portcullis/auth";
import {
  honoMiddleware,
  type PortcullisVariables,
} from "@portcullis/auth/adapters/hono";
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

const env = Deno.env.toObject();
const port = Number(env.PORT ?? 8000);
const appOrigin = env.APP_ORIGIN ?? `http://localhost:${port}`;
if (!env.DATABASE_URL || !env.KV_PATH) {
  await Deno.mkdir("data", { recursive: true }); // the defaults live there
}
const db = drizzle(createClient({
  url: env.DATABASE_URL ?? "file:./data/app.db",
  authToken: env.DATABASE_AUTH_TOKEN,
}));
await migrate(db); // idempotent
const secret = SecretProvider.fromEnv("AUTH_SECRET");
const kv = await DenoKV.open(env.KV_PATH ?? "./data/kv.sqlite3");
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
  cookieSecure: appOrigin.startsWith("https:"),
  // Hono on Deno passes Deno's connection info on to a mounted handler.
  clientAddress: (_req, info) =>
    (info as Deno.ServeHandlerInfo<Deno.NetAddr> | undefined)?.remoteAddr
      ?.hostname ?? null,
  // Behind a reverse proxy: its addresses (see the guide).
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

const app = new Hono<{ Variables: PortcullisVariables }>();
// A page of the app's own: identity, then the gate (303 to /login).
app.get(
  "/dashboard",
  honoMiddleware(identityMiddleware(sessions, {
    cookie: { secure: appOrigin.startsWith("https:") },
    crossOrigin: { appOrigin },
  })),
  honoMiddleware(requireAuth()),
  async (c) => {
    const user = await flows.context.credentials.findById(
      currentUser(c.req.raw) ?? "",
    );
    return c.html(
      `<!doctype html><title>Dashboard</title><p>Signed in as ${
        (user?.email ?? "").replace(/[<>&"']/g, "")
      }.</p><p><a href="/account">Your account</a></p>`,
    );
  },
);
// Every account flow: /login, /register, /verify, /password/…, /account, …
app.mount("/", flows.fetch);

Deno.serve({ port }, app.fetch);
