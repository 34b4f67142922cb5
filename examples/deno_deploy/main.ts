/**
 * The reference app on Deno Deploy (and plain Deno): `Deno.serve`, the
 * session denylist, rate limits and notes in Deno KV, users and
 * verification tokens in libSQL (Turso in production, a local file in
 * development).
 *
 * Bindings (environment variables): `AUTH_SECRET` (at least 32 bytes),
 * `APP_ORIGIN` (the public `https://…` origin), `DATABASE_URL`
 * (`libsql://…` for Turso, or `file:./data/app.db`), `DATABASE_AUTH_TOKEN`,
 * `RESEND_API_KEY` and `MAIL_FROM` (without a key, links are logged),
 * `KV_PATH` (local runs only; Deploy's KV needs no path), `PORT`.
 *
 * Run: `deno run -A examples/deno_deploy/main.ts`. Deploy: see README.md.
 *
 * @module
 */
import {
  DenoKV,
  KVSessionStore,
  SecretProvider,
  SessionManager,
} from "@portcullis/auth";
import {
  migrate,
  SQLCredentialStore,
  SQLVerificationTokenStore,
} from "@portcullis/sql";
import { type App, type AppDeps, createApp } from "../app/app.ts";
import { mailerFromEnv } from "../app/mailer.ts";

/** The bindings the entry reads. */
export type Env = Record<string, string | undefined>;

/**
 * Opens the stores named by the bindings and builds the app.
 *
 * @param env The bindings, usually `Deno.env.toObject()`.
 * @param overrides Parts to use instead of the defaults (tests pass a
 * cheaper hasher); never needed in production.
 * @returns The app's handler.
 * @throws {TypeError} When `AUTH_SECRET`, `APP_ORIGIN` or `DATABASE_URL` is
 * missing or invalid.
 */
export async function createDeployApp(
  env: Env,
  overrides: Partial<AppDeps> = {},
): Promise<App> {
  const url = env.DATABASE_URL;
  if (!url) {
    throw new TypeError(
      "DATABASE_URL is not set: use libsql://… (Turso) or file:…",
    );
  }
  if (!env.APP_ORIGIN) {
    throw new TypeError(
      "APP_ORIGIN is not set: use the public https://… origin",
    );
  }
  const secret = SecretProvider.fromEnv("AUTH_SECRET", { env });
  // A file needs libSQL's native driver (plain Deno only); Deploy reaches
  // Turso over HTTP with the web client, which loads no native code.
  const { drizzle } = url.startsWith("file:")
    ? await import("drizzle-orm/libsql")
    : await import("drizzle-orm/libsql/web");
  const db = drizzle({
    connection: { url, authToken: env.DATABASE_AUTH_TOKEN },
  });
  await migrate(db); // idempotent: CREATE … IF NOT EXISTS
  const kv = await DenoKV.open(env.KV_PATH);
  return createApp({
    sessions: new SessionManager({ secret, store: new KVSessionStore(kv) }),
    secret,
    credentials: new SQLCredentialStore(db),
    tokens: new SQLVerificationTokenStore(db),
    kv,
    mailer: mailerFromEnv(env),
    appOrigin: env.APP_ORIGIN,
    // Deno.serve passes the connection as the second argument.
    clientAddress: (_req, info) =>
      (info as { remoteAddr?: { hostname?: string } } | undefined)?.remoteAddr
        ?.hostname ?? null,
    ...overrides,
  });
}

if (import.meta.main) {
  const app = await createDeployApp(Deno.env.toObject());
  // Deno Deploy ignores the port; locally PORT (default 8000) applies.
  Deno.serve({ port: Number(Deno.env.get("PORT") ?? 8000) }, app);
}
