/**
 * `@portcullis/accounts/deno`: the app on Deno with every default a new
 * project needs, so that a project's `main.ts` is its modules and views and
 * one call. {@linkcode serveAccounts} reads the settings from the
 * environment, opens the stores and serves {@linkcode accounts} with
 * `Deno.serve`:
 *
 * - users, single-use tokens and security events in a libSQL file,
 *   `./data/app.db` (`DATABASE_URL`, for example a Turso URL with
 *   `DATABASE_AUTH_TOKEN`), migrated on start; the session denylist, rate
 *   limits and the app's own records in Deno KV, `./data/kv.sqlite3`
 *   (`KV_PATH`); the folder (`DATA_DIR`) 0700 and its files 0600. On Deno
 *   Deploy (`DENO_DEPLOYMENT_ID` set) Deploy's own KV, and `DATABASE_URL`
 *   is required; Deploy counts as production;
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
 * - every connection holds an open file, and the start logs the process's
 *   limit (`ulimit -n`). At the limit `Deno.serve` stops accepting; the
 *   app logs one line, closes its idle connections (a running handler
 *   still answers) and listens again, where Deno alone would exit.
 *
 * @example A project's main.ts
 * ```ts ignore
 * import { serveAccounts } from "@portcullis/accounts/deno";
 * import { modules } from "./modules.ts";
 * import { views } from "./views/mod.ts";
 *
 * await serveAccounts({ modules, views });
 * ```
 *
 * @module
 */
import {
  DenoKV,
  KVSessionStore,
  SecretProvider,
  SessionManager,
} from "@portcullis/auth";
import { TrustedProxies } from "@portcullis/auth/http";
import { migrate, type SQLDatabase } from "@portcullis/sql";
import { openLocalSQLite } from "./_node_sqlite.ts";
import { type Accounts, accounts } from "../accounts.ts";
import type { AccountsModule } from "../module.ts";
import { envFlag } from "../config.ts";
import { mailerFromEnv } from "../mailer.ts";
import type { ViewOverrides } from "../views/mod.ts";
import { privateDir, privateFile } from "./data_dir.ts";
import { openFileLimit, serveResilient } from "./_serve.ts";

export { privateDir, privateFile } from "./data_dir.ts";

/** Settings, as the environment gives them. */
export type Env = Record<string, string | undefined>;

/** Options of {@linkcode serveAccounts}. */
export interface ServeAccountsOptions {
  /** The app's modules for its settings (a project's `modules.ts`). */
  modules: (env: Env) => AccountsModule[];
  /** The app's pages and mails (a project's `views/mod.ts`). */
  views?: ViewOverrides;
  /** The settings; default `Deno.env.toObject()`. */
  env?: Env;
  /** Where progress lines go; default `console.log`. */
  log?: (line: string) => void;
}

const LIBSQL_CLIENT = "npm:@libsql/client@^0.18.0";
const DRIZZLE_LIBSQL = "npm:drizzle-orm@^0.45.4/libsql";

/**
 * Opens the stores the settings name and serves the app with `Deno.serve`.
 *
 * @param options The modules, the views and the settings.
 * @returns The running server and the app.
 * @throws {TypeError} For a setting the app cannot start with (its message
 * says which and what to do; it holds no secret).
 */
export async function serveAccounts(
  options: ServeAccountsOptions,
): Promise<{ server: Deno.HttpServer<Deno.NetAddr>; app: Accounts }> {
  const env = options.env ?? Deno.env.toObject();
  const log = options.log ?? console.log;
  // Deno Deploy: no writable disk; its own KV, a remote database.
  const deploy = env.DENO_DEPLOYMENT_ID !== undefined;
  const production = deploy || env.DENO_ENV === "production";
  const dataDir = env.DATA_DIR ?? "./data";
  const port = Number(env.PORT ?? "8000");
  if (production && !env.APP_ORIGIN) {
    throw new TypeError(
      "APP_ORIGIN is not set. In production the app does not start without it: links in emails and the cross-origin check use it. Set APP_ORIGIN to the public origin, for example https://app.example.com (scheme://host[:port], no path).",
    );
  }
  const appOrigin = env.APP_ORIGIN ?? `http://localhost:${port}`;
  // `COOKIE_SECURE=false` for plain-HTTP development only; a typo stops here.
  const cookieSecure = envFlag(env, "COOKIE_SECURE", true);
  // `TRUSTED_PROXIES` behind a reverse proxy; a typo stops here.
  const trustedProxies = TrustedProxies.parse(env.TRUSTED_PROXIES ?? "");
  const forwardedHeader = env.FORWARDED_HEADER?.trim().toLowerCase() ||
    "x-forwarded-for";
  if (!/^[a-z0-9-]+$/.test(forwardedHeader)) {
    throw new TypeError(
      `FORWARDED_HEADER must be a header name such as x-forwarded-for, forwarded or cf-connecting-ip: received "${env.FORWARDED_HEADER}"`,
    );
  }
  // Password hashes, the KV file and the dev secret: 0700 folder, 0600 files.
  if (!deploy) await privateDir(dataDir);
  const secret = await loadSecret(env, production, dataDir, log);
  if (production && !env.RESEND_API_KEY && env.MAIL_TRANSPORT !== "log") {
    throw new TypeError(
      "RESEND_API_KEY is not set. In production the app does not log verification links: set RESEND_API_KEY (and MAIL_FROM), or MAIL_TRANSPORT=log to log them anyway.",
    );
  }
  const list = options.modules(env);
  if (deploy && !env.DATABASE_URL) {
    throw new TypeError(
      "DATABASE_URL is not set. On Deno Deploy the app keeps its users in a remote database: set DATABASE_URL (a Turso URL) and DATABASE_AUTH_TOKEN.",
    );
  }
  const databaseUrl = env.DATABASE_URL ?? `file:${dataDir}/app.db`;
  if (!env.DATABASE_URL) await privateFile(`${dataDir}/app.db`);
  const db = await openDatabase(databaseUrl, env.DATABASE_AUTH_TOKEN);
  await migrate(db);
  const kvPath = env.KV_PATH ?? (deploy ? undefined : `${dataDir}/kv.sqlite3`);
  if (kvPath !== undefined) await privateFile(kvPath);
  const kv = await DenoKV.open(kvPath);
  const sessionStore = new KVSessionStore(kv);
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
    views: options.views,
  });
  // Every connection holds an open file. At the limit Deno.serve's accept
  // loop ends (and an unhandled end exits the process): serveResilient
  // logs it, closes the idle connections and listens again.
  const limit = openFileLimit();
  const server = serveResilient({
    port,
    limit,
    log,
    onListen: ({ port }) => {
      log(
        `Listening on port ${port}, serving ${appOrigin} (set PORT to listen on another port, APP_ORIGIN for the public origin)`,
      );
      if (limit) {
        log(
          `Open-file limit ${limit.soft} (ulimit -n; hard limit ${
            Number.isFinite(limit.hard) ? limit.hard : "unlimited"
          }): each connection holds one; facing the internet directly, raise it and serve behind a proxy that closes idle connections.`,
        );
      }
    },
  }, app.fetch);
  return { server, app };
}

/** Reads AUTH_SECRET, or in development creates `<data>/dev-secret` once. */
async function loadSecret(
  env: Env,
  production: boolean,
  dataDir: string,
  log: (line: string) => void,
): Promise<SecretProvider> {
  if (env.AUTH_SECRET) return SecretProvider.fromEnv("AUTH_SECRET", { env });
  if (production) {
    throw new TypeError(
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
    log(
      `Created ${path} with a random development secret (AUTH_SECRET is not set). Do not use it in production.`,
    );
  }
  return SecretProvider.fromValue(secret);
}

/**
 * A local file through `node:sqlite` with its statements prepared once
 * (`@libsql/client`'s per-query native statements grow the process on
 * Deno); a remote database (Turso) through `@libsql/client`, loaded only
 * then: the specifiers are values, so that a local start never downloads
 * the client's native builds.
 */
async function openDatabase(
  url: string,
  authToken?: string,
): Promise<SQLDatabase> {
  if (/^file:|^:memory:$/.test(url)) {
    return openLocalSQLite(
      url.startsWith("file://")
        ? decodeURIComponent(new URL(url).pathname)
        : url.replace(/^file:/, ""),
    ).db;
  }
  const client = await import(LIBSQL_CLIENT) as {
    createClient(config: { url: string; authToken?: string }): unknown;
  };
  const driver = await import(DRIZZLE_LIBSQL) as {
    drizzle(client: unknown): SQLDatabase;
  };
  return driver.drizzle(client.createClient({ url, authToken }));
}
