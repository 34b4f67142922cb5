/**
 * The app on Deno: `deno run -A main.ts` (or `deno task start`).
 *
 * Embedded defaults, each overridable by an environment variable:
 * - users, single-use tokens and security events in a libSQL file, `./data/app.db`
 *   (`DATABASE_URL`, for example a Turso URL with `DATABASE_AUTH_TOKEN`);
 *   the schema is migrated on start;
 * - the session denylist, rate limits and notes in Deno KV,
 *   `./data/kv.sqlite3` (`KV_PATH`);
 * - mail through Resend when `RESEND_API_KEY` is set (`MAIL_FROM`,
 *   `RESEND_BASE_URL`); otherwise each link is logged on one line that
 *   starts with `[mail not sent]`;
 * - `PORT` (default 8000) and `APP_ORIGIN` (default
 *   `http://localhost:<port>` in development only);
 * - `AUTH_SECRET` (at least 32 bytes; `AUTH_PREVIOUS_SECRETS` during
 *   rotation). In development only, a missing secret is created once in
 *   `./data/dev-secret`. With `DENO_ENV=production` a missing secret, a
 *   missing `APP_ORIGIN` or a missing mail binding stops the start;
 * - cookies marked `Secure` (`COOKIE_SECURE=false` to try the app over
 *   plain HTTP on a host other than localhost);
 * - the client's address for every rate limit is the socket's, and
 *   forwarding headers are ignored. Behind a reverse proxy set
 *   `TRUSTED_PROXIES` to the proxies' addresses or CIDR ranges (nginx on
 *   the same host: `127.0.0.1`; Docker: its network, for example
 *   `172.16.0.0/12`) or to a hop count (`1` where a platform always stands
 *   in front and sets the header), and `FORWARDED_HEADER` to the header
 *   they write: `x-forwarded-for` (default), `forwarded`,
 *   `cf-connecting-ip`, `fly-client-ip` or `x-real-ip`. Without it, behind
 *   a proxy every client shares the proxy's limits;
 * - each module's settings (`TOTP=off`, `OIDC_ISSUER`, …): see
 *   `modules.ts`.
 *
 * An on/off setting takes `1`, `true`, `yes`, `on` or `0`, `false`, `no`,
 * `off` in any case; any other value stops the start.
 *
 * @module
 */
import {
  DenoKV,
  KVSessionStore,
  SecretProvider,
  SessionManager,
} from "@portcullis/auth";
import { migrate, type SQLDatabase } from "@portcullis/sql";
import { TrustedProxies } from "@portcullis/auth/http";
import { accounts, envFlag, mailerFromEnv } from "@portcullis/accounts";
import { modules } from "./modules.ts";
import { openLocalSQLite } from "./local_sqlite.ts";
import { privateDir, privateFile } from "./data_dir.ts";

const LIBSQL_CLIENT = "npm:@libsql/client@^0.18.0";
const DRIZZLE_LIBSQL = "npm:drizzle-orm@^0.45.4/libsql";

const env = Deno.env.toObject();
const production = env.DENO_ENV === "production";
const dataDir = env.DATA_DIR ?? "./data";
const port = Number(env.PORT ?? "8000");

function fail(message: string): never {
  console.error(`error: ${message}`);
  Deno.exit(1);
}

if (production && !env.APP_ORIGIN) {
  fail(
    "APP_ORIGIN is not set. In production the app does not start without it: links in emails and the cross-origin check use it. Set APP_ORIGIN to the public origin, for example https://app.example.com (scheme://host[:port], no path).",
  );
}
const appOrigin = env.APP_ORIGIN ?? `http://localhost:${port}`;
// `COOKIE_SECURE=false` for plain-HTTP development only; a typo stops here.
let cookieSecure = true;
try {
  cookieSecure = envFlag(env, "COOKIE_SECURE", true);
} catch (error) {
  fail((error as TypeError).message);
}
// `TRUSTED_PROXIES` behind a reverse proxy; a typo stops here.
let trustedProxies = TrustedProxies.none;
try {
  trustedProxies = TrustedProxies.parse(env.TRUSTED_PROXIES ?? "");
} catch (error) {
  fail((error as TypeError).message);
}
const forwardedHeader = env.FORWARDED_HEADER?.trim().toLowerCase() ||
  "x-forwarded-for";
if (!/^[a-z0-9-]+$/.test(forwardedHeader)) {
  fail(
    `FORWARDED_HEADER must be a header name such as x-forwarded-for, forwarded or cf-connecting-ip: received "${env.FORWARDED_HEADER}"`,
  );
}

/** Reads AUTH_SECRET, or in development creates `data/dev-secret` once. */
async function loadSecret(): Promise<SecretProvider> {
  if (env.AUTH_SECRET) return SecretProvider.fromEnv("AUTH_SECRET");
  if (production) {
    fail(
      "AUTH_SECRET is not set. In production the app does not start without it: set AUTH_SECRET to at least 32 random bytes (for example the output of `openssl rand -base64 48`).",
    );
  }
  const path = `${dataDir}/dev-secret`;
  let secret: string;
  try {
    secret = (await Deno.readTextFile(path)).trim();
    await privateFile(path); // narrows a file made before this rule
  } catch (error) {
    if (!(error instanceof Deno.errors.NotFound)) throw error;
    const bytes = crypto.getRandomValues(new Uint8Array(48));
    secret = btoa(String.fromCharCode(...bytes));
    await Deno.writeTextFile(path, secret + "\n", {
      mode: 0o600,
      createNew: true,
    });
    console.log(
      `Created ${path} with a random development secret (AUTH_SECRET is not set). Do not use it in production.`,
    );
  }
  return SecretProvider.fromValue(secret);
}

// Password hashes, the KV file and the dev secret: 0700 folder, 0600 files.
await privateDir(dataDir);
const secret = await loadSecret();
if (production && !env.RESEND_API_KEY && env.MAIL_TRANSPORT !== "log") {
  fail(
    "RESEND_API_KEY is not set. In production the app does not log verification links: set RESEND_API_KEY (and MAIL_FROM), or MAIL_TRANSPORT=log to log them anyway.",
  );
}

const databaseUrl = env.DATABASE_URL ?? `file:${dataDir}/app.db`;
// A local file through node:sqlite with its statements prepared once (see
// local_sqlite.ts: @libsql/client's per-query native statements grow the
// process on Deno); a remote database (Turso) through @libsql/client.
const local = /^file:|^:memory:$/.test(databaseUrl);
if (!env.DATABASE_URL) await privateFile(`${dataDir}/app.db`);
const db = local
  ? openLocalSQLite(
    databaseUrl.startsWith("file://")
      ? decodeURIComponent(new URL(databaseUrl).pathname)
      : databaseUrl.replace(/^file:/, ""),
  ).db
  : await openRemoteLibSQL(databaseUrl, env.DATABASE_AUTH_TOKEN);

/**
 * A remote libSQL database (Turso) through `@libsql/client`, loaded only
 * here: the specifiers are values, so that Deno leaves them out of the start's
 * module graph (and `deno.lock` beside this file) and a local start never
 * downloads the client's native builds.
 */
async function openRemoteLibSQL(
  url: string,
  authToken?: string,
): Promise<SQLDatabase> {
  const client = await import(LIBSQL_CLIENT) as {
    createClient(config: { url: string; authToken?: string }): unknown;
  };
  const driver = await import(DRIZZLE_LIBSQL) as {
    drizzle(client: unknown): SQLDatabase;
  };
  return driver.drizzle(client.createClient({ url, authToken }));
}
await migrate(db);

const kvPath = env.KV_PATH ?? `${dataDir}/kv.sqlite3`;
await privateFile(kvPath);
const kv = await DenoKV.open(kvPath);
const sessionStore = new KVSessionStore(kv);
let list;
try {
  list = modules(env);
} catch (error) {
  // A setting the app cannot use: its message, no stack.
  if (error instanceof TypeError) fail(error.message);
  throw error;
}
const app = accounts({
  sessions: new SessionManager({ secret, store: sessionStore }),
  sessionStore,
  secret,
  db,
  kv,
  mailer: mailerFromEnv(env),
  appOrigin,
  cookieSecure,
  clientAddress: (_req, info) =>
    (info as Deno.ServeHandlerInfo<Deno.NetAddr> | undefined)?.remoteAddr
      ?.hostname ?? null,
  trustedProxies,
  forwardedHeader,
  modules: list,
});

Deno.serve({
  port,
  onListen: ({ port }) =>
    console.log(
      `Listening on port ${port}, serving ${appOrigin} (set PORT to listen on another port, APP_ORIGIN for the public origin)`,
    ),
}, app.fetch);
