/**
 * What the Bun conformance run executes with `bun run`: the reference app
 * (examples/app) behind `Bun.serve`, users and verification tokens in a
 * libSQL file, and the session denylist, rate limits and notes in Upstash
 * when `UPSTASH_REDIS_REST_URL` is set, else in a key-value table of the
 * same libSQL database (`LibsqlKV`); the conformance hasher and limits.
 * The sign-in methods beside the password as `main.ts` builds them
 * (`modules.ts`: TOTP, passkeys, OpenID Connect when
 * `OIDC_ISSUER` is set), their tables in the libSQL file.
 *
 * @module
 */
import process from "node:process";
import { createClient } from "@libsql/client";
import { drizzle } from "drizzle-orm/libsql";
import {
  type KeyValueStore,
  KVSessionStore,
  SecretProvider,
  SessionManager,
} from "@portcullis/auth";
import { LibsqlKV } from "@portcullis/libsql-kv";
import { UpstashKV } from "@portcullis/upstash";
import { migrate } from "@portcullis/sql";
import { accounts, mailerFromEnv } from "@portcullis/accounts";
import { modules } from "../../../examples/app/modules.ts";
import {
  CONFORMANCE_LIMITS,
  conformanceHasher,
  withHasherReport,
} from "../_hasher.ts";
import { deviceBoundFromEnv } from "../_device_bound.ts";

/** The part of Bun's server the app uses: the client's address. */
interface BunServerLike {
  requestIP(req: Request): { address: string } | null;
}

declare const Bun: {
  serve(options: {
    hostname: string;
    port: number;
    fetch: (req: Request, server: BunServerLike) => Promise<Response>;
  }): { port: number };
};

const env = process.env;
const secret = SecretProvider.fromEnv("AUTH_SECRET", { env });
const client = createClient({ url: env.DATABASE_URL! });
const db = drizzle(client);
await migrate(db);
const kv: KeyValueStore = env.UPSTASH_REDIS_REST_URL
  ? new UpstashKV({
    url: env.UPSTASH_REDIS_REST_URL,
    token: env.UPSTASH_REDIS_REST_TOKEN ?? "",
    prefix: env.KV_PREFIX ?? "",
  })
  : new LibsqlKV(client);
const hasher = conformanceHasher();
const app = withHasherReport(
  accounts({
    sessions: new SessionManager({ secret, store: new KVSessionStore(kv) }),
    secret,
    db,
    kv,
    mailer: mailerFromEnv(env),
    appOrigin: env.APP_ORIGIN!,
    clientAddress: (req, server) =>
      (server as BunServerLike).requestIP(req)?.address ?? null,
    hasher,
    limits: CONFORMANCE_LIMITS,
    deviceBound: deviceBoundFromEnv(env),
    modules: modules(env),
  }).fetch,
  hasher,
);
const server = Bun.serve({
  hostname: "127.0.0.1",
  port: Number(env.PORT),
  fetch: (req, server) => app(req, server),
});
console.log(`listening on ${server.port}`);
