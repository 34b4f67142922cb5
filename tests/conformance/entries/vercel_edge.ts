/**
 * What the Vercel Edge conformance run bundles as a classic script for
 * Vercel's `edge-runtime`: the reference app (examples/app) as one Edge
 * Function on a `fetch` event listener (how edge-runtime, like Vercel,
 * delivers requests). The session denylist, rate limits and notes in
 * Upstash; users and verification tokens in the SQL stores over
 * `@libsql/client/web` to `DATABASE_URL` (Turso in production; the
 * run points it at the libSQL HTTP bridge). The sign-in methods beside the
 * password as `main.ts` builds them (`modules.ts`: TOTP,
 * passkeys, OpenID Connect when `OIDC_ISSUER` is set), their tables in the
 * same SQL database. The conformance hasher and limits.
 *
 * @module
 */
import {
  KVSessionStore,
  SecretProvider,
  SessionManager,
} from "@portcullis/auth";
import { UpstashKV } from "@portcullis/upstash";
import { migrate } from "@portcullis/sql";
import { drizzle } from "drizzle-orm/libsql/web";
import { type Accounts, accounts, mailerFromEnv } from "@portcullis/accounts";
import { modules } from "../../../examples/app/modules.ts";
import {
  CONFORMANCE_LIMITS,
  conformanceHasher,
  withHasherReport,
} from "../_hasher.ts";
import { deviceBoundFromEnv } from "../_device_bound.ts";

interface FetchEventLike {
  request: Request;
  respondWith(response: Promise<Response>): void;
}

type Env = Record<string, string | undefined>;

async function build(env: Env): Promise<Accounts> {
  const secret = SecretProvider.fromEnv("AUTH_SECRET", { env });
  const kv = new UpstashKV({
    url: env.UPSTASH_REDIS_REST_URL!,
    token: env.UPSTASH_REDIS_REST_TOKEN!,
    prefix: env.KV_PREFIX ?? "",
  });
  const db = drizzle({
    connection: { url: env.DATABASE_URL!, authToken: env.DATABASE_AUTH_TOKEN },
  });
  await migrate(db);
  return accounts({
    sessions: new SessionManager({ secret, store: new KVSessionStore(kv) }),
    secret,
    db,
    kv,
    mailer: mailerFromEnv(env),
    appOrigin: env.APP_ORIGIN!,
    // Vercel sets x-real-ip; a client cannot override it there.
    clientAddress: (req) => req.headers.get("x-real-ip"),
    hasher,
    limits: CONFORMANCE_LIMITS,
    deviceBound: deviceBoundFromEnv(env),
    modules: modules(env),
  });
}

const env = (globalThis as unknown as { process: { env: Env } }).process.env;
const hasher = conformanceHasher();
const app = build(env).then((a) => withHasherReport(a.fetch, hasher));

(globalThis as unknown as {
  addEventListener(type: "fetch", fn: (event: FetchEventLike) => void): void;
}).addEventListener("fetch", (event) => {
  event.respondWith(app.then((a) => a(event.request)));
});
