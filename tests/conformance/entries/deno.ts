/**
 * The reference app (examples/app) wired for Deno and Deno Deploy, as the
 * Deno and Hono conformance runs serve it: the session denylist, rate
 * limits and notes in Deno KV, users and verification tokens in libSQL (a
 * file through the native driver, or Turso over HTTP with the web client),
 * and the sign-in methods beside the password as `main.ts` builds them
 * (`modules.ts`: TOTP and passkeys on, OpenID Connect when
 * `OIDC_ISSUER` is set), their tables in the same libSQL database.
 *
 * @module
 */
import {
  DenoKV,
  KVSessionStore,
  SecretProvider,
  SessionManager,
} from "@portcullis/auth";
import { migrate } from "@portcullis/sql";
import {
  type Accounts,
  accounts,
  type AccountsOptions,
  mailerFromEnv,
} from "@portcullis/accounts";
import { modules } from "../../../examples/app/modules.ts";
import { deviceBoundFromEnv } from "../_device_bound.ts";

/** The bindings the entry reads. */
export type Env = Record<string, string | undefined>;

/**
 * Opens the stores named by the bindings and builds the reference app.
 *
 * @param env `AUTH_SECRET`, `APP_ORIGIN`, `DATABASE_URL` (`file:…` or
 * `libsql://…`), `DATABASE_AUTH_TOKEN`, `KV_PATH`, `RESEND_API_KEY`,
 * `RESEND_BASE_URL`, `MAIL_FROM`, and the sign-in methods' settings
 * (`TOTP`, `PASSKEYS`, `OIDC_*`; see each module's `mod.ts` under
 * examples/app/methods/), and `DBSC_COOKIE_LIFETIME` (_device_bound.ts).
 * @param overrides Parts to use instead of the defaults (the conformance
 * hasher and limits).
 * @returns The app's handler.
 * @throws {TypeError} When `AUTH_SECRET`, `APP_ORIGIN` or `DATABASE_URL` is
 * missing or invalid.
 */
export async function createDenoApp(
  env: Env,
  overrides: Partial<AccountsOptions> = {},
): Promise<Accounts> {
  const url = env.DATABASE_URL;
  if (!url) throw new TypeError("DATABASE_URL is not set");
  if (!env.APP_ORIGIN) throw new TypeError("APP_ORIGIN is not set");
  const secret = SecretProvider.fromEnv("AUTH_SECRET", { env });
  // A file needs libSQL's native driver; Turso is reached over HTTP.
  const { drizzle } = url.startsWith("file:")
    ? await import("drizzle-orm/libsql")
    : await import("drizzle-orm/libsql/web");
  const db = drizzle({
    connection: { url, authToken: env.DATABASE_AUTH_TOKEN },
  });
  await migrate(db);
  const kv = await DenoKV.open(env.KV_PATH);
  return accounts({
    sessions: new SessionManager({ secret, store: new KVSessionStore(kv) }),
    secret,
    db,
    kv,
    mailer: mailerFromEnv(env),
    appOrigin: env.APP_ORIGIN,
    clientAddress: (_req, info) =>
      (info as { remoteAddr?: { hostname?: string } } | undefined)?.remoteAddr
        ?.hostname ?? null,
    modules: modules(env),
    deviceBound: deviceBoundFromEnv(env),
    ...overrides,
  });
}
