/**
 * The magic-link example on Deno, over the reference app's database
 * (`./data/app.db`) and Deno KV, so users registered there can sign in here
 * by email: `deno run -A examples/magic_link/main.ts` (`PORT`, default 8001).
 * Needs `AUTH_SECRET` or the reference app's `./data/dev-secret`.
 *
 * @module
 */
import { createClient } from "@libsql/client";
import { drizzle } from "drizzle-orm/libsql";
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
import { mailerFromEnv } from "../app/mailer.ts";
import { createMagicLinkApp } from "./app.ts";

const env = Deno.env.toObject();
const dataDir = env.DATA_DIR ?? "./data";
const port = Number(env.PORT ?? "8001");
const appOrigin = env.APP_ORIGIN ?? `http://localhost:${port}`;
await Deno.mkdir(dataDir, { recursive: true });
const secret = env.AUTH_SECRET
  ? SecretProvider.fromEnv("AUTH_SECRET")
  : SecretProvider.fromValue(
    (await Deno.readTextFile(`${dataDir}/dev-secret`)).trim(),
  );
const db = drizzle(createClient({ url: `file:${dataDir}/app.db` }));
await migrate(db);
const kv = await DenoKV.open(`${dataDir}/kv.sqlite3`);
Deno.serve(
  { port },
  createMagicLinkApp({
    sessions: new SessionManager({ secret, store: new KVSessionStore(kv) }),
    credentials: new SQLCredentialStore(db),
    tokens: new SQLVerificationTokenStore(db),
    mailer: mailerFromEnv(env),
    kv,
    clientAddress: (_req, info) =>
      (info as Deno.ServeHandlerInfo<Deno.NetAddr> | undefined)?.remoteAddr
        ?.hostname ?? null,
    appOrigin,
  }),
);
