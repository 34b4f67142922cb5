/**
 * The app on Deno: `deno run -A main.ts` (or `deno task start`). The
 * modules are in `modules.ts`, the pages and mails in `views/`; everything
 * else is `@portcullis/accounts/deno`'s defaults, each overridable by an
 * environment variable:
 *
 * - `./data/app.db` (libSQL; `DATABASE_URL`, `DATABASE_AUTH_TOKEN` for
 *   Turso) and `./data/kv.sqlite3` (Deno KV; `KV_PATH`), `DATA_DIR`;
 * - mail through Resend with `RESEND_API_KEY` (`MAIL_FROM`); without it
 *   each link is logged on a line that starts with `[mail not sent]`;
 * - `PORT` (default 8000), `APP_ORIGIN` (the public origin);
 * - `AUTH_SECRET` (in development only, a missing one is created once in
 *   `./data/dev-secret`); with `DENO_ENV=production` a missing secret,
 *   origin or mail binding stops the start;
 * - `COOKIE_SECURE=false` to try the app over plain HTTP on another host
 *   than localhost;
 * - behind a reverse proxy, `TRUSTED_PROXIES` (its addresses, CIDR ranges
 *   or a hop count) and `FORWARDED_HEADER` (default `x-forwarded-for`);
 *   without them every rate limit reads the socket's address;
 * - each module's settings (`TOTP=off`, `OIDC_ISSUER`, …): see `modules.ts`.
 *
 * @module
 */
import { serveAccounts } from "@portcullis/accounts/deno";
import { modules } from "./modules.ts";
import { views } from "./views/mod.ts";

try {
  await serveAccounts({ modules, views });
} catch (error) {
  // A setting the app cannot start with: its message, no stack.
  if (!(error instanceof TypeError || error instanceof RangeError)) throw error;
  console.error(`error: ${error.message}`);
  Deno.exit(1);
}
