/**
 * The magic-link example on Deno: users and one-time tokens in a libSQL
 * file, sessions and request limits in Deno KV. Beside the reference app,
 * point `DATA_DIR` at its `data/` folder and its users sign in here by
 * email; on its own, `SEED_USERS` creates accounts to try it with.
 *
 * Environment: `AUTH_SECRET` (at least 32 random bytes), `APP_ORIGIN`
 * (default `http://localhost:<port>`), `DATA_DIR` (default `./data`),
 * `PORT` (default 8001), `SEED_USERS` (comma-separated emails),
 * `RESEND_API_KEY` and `MAIL_FROM` (without a key, links are logged on a
 * line starting with `[mail not sent]`).
 *
 * Run: `deno task start` (README.md).
 *
 * @module
 */
// deno-lint-ignore no-import-prefix -- named here, not in the workspace's import map, so that the reference app's first start does not download it (deno task installs every import-map dependency)
import { createClient } from "npm:@libsql/client@^0.18.0";
import { drizzle } from "drizzle-orm/libsql";
import {
  DenoKV,
  KVSessionStore,
  normalizeEmail,
  SecretProvider,
  SessionManager,
} from "@portcullis/auth";
import {
  migrate,
  SQLCredentialStore,
  SQLVerificationTokenStore,
} from "@portcullis/sql";
import { createMagicLinkApp } from "./app.ts";
import { mailerFromEnv } from "./mail.ts";

const env = Deno.env.toObject();
const dataDir = env.DATA_DIR ?? "./data";
const port = Number(env.PORT ?? "8001");
const appOrigin = env.APP_ORIGIN ?? `http://localhost:${port}`;
await Deno.mkdir(dataDir, { recursive: true });
const secret = SecretProvider.fromEnv("AUTH_SECRET");
const db = drizzle(createClient({ url: `file:${dataDir}/app.db` }));
await migrate(db);
const credentials = new SQLCredentialStore(db);
for (const raw of (env.SEED_USERS ?? "").split(",").filter(Boolean)) {
  const email = normalizeEmail(raw);
  if (await credentials.findByEmail(email)) continue;
  // No password: this account signs in by email only. Its address counts
  // as proven: whoever runs the app vouches for the addresses it seeds.
  const id = crypto.randomUUID();
  await credentials.create({
    id,
    email,
    passwordHash: "!",
    createdAt: Date.now(),
  });
  await credentials.markVerified(id, email, Date.now());
}
const kv = await DenoKV.open(`${dataDir}/kv.sqlite3`);
Deno.serve(
  { port },
  createMagicLinkApp({
    sessions: new SessionManager({ secret, store: new KVSessionStore(kv) }),
    credentials,
    tokens: new SQLVerificationTokenStore(db),
    mailer: mailerFromEnv(env),
    kv,
    clientAddress: (_req, info) =>
      (info as Deno.ServeHandlerInfo<Deno.NetAddr> | undefined)?.remoteAddr
        ?.hostname ?? null,
    appOrigin,
  }),
);
