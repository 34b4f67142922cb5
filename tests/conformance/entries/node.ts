/**
 * What the Node conformance run bundles and starts with `node`: the
 * reference app (examples/app) behind the `node:http` adapter, users and
 * verification tokens in a libSQL file, the session denylist, rate limits
 * and notes in a key-value table of the same database (`LibsqlKV`); the
 * conformance hasher and limits. The sign-in methods beside the password
 * as `main.ts` builds them (`modules.ts`: TOTP, passkeys, OpenID
 * Connect when `OIDC_ISSUER` is set), their tables in the libSQL file.
 *
 * @module
 */
import process from "node:process";
import { createClient } from "@libsql/client";
import { drizzle } from "drizzle-orm/libsql";
import {
  KVSessionStore,
  SecretProvider,
  SessionManager,
} from "@portcullis/auth";
import { serve } from "@portcullis/auth/adapters/node";
import { LibsqlKV } from "@portcullis/libsql-kv";
import { migrate } from "@portcullis/sql";
import { accounts, mailerFromEnv } from "@portcullis/accounts";
import { modules } from "../../../examples/app/modules.ts";
import {
  CONFORMANCE_LIMITS,
  conformanceHasher,
  withHasherReport,
} from "../_hasher.ts";
import { deviceBoundFromEnv } from "../_device_bound.ts";

const env = process.env;
const secret = SecretProvider.fromEnv("AUTH_SECRET", { env });
const client = createClient({ url: env.DATABASE_URL! });
const db = drizzle(client);
await migrate(db);
const kv = new LibsqlKV(client);
const hasher = conformanceHasher();
const app = withHasherReport(
  accounts({
    sessions: new SessionManager({ secret, store: new KVSessionStore(kv) }),
    secret,
    db,
    kv,
    mailer: mailerFromEnv(env),
    appOrigin: env.APP_ORIGIN!,
    // The node:http adapter passes the socket address the way Deno.serve does.
    clientAddress: (_req, info) =>
      (info as { remoteAddr?: { hostname?: string } } | undefined)?.remoteAddr
        ?.hostname ?? null,
    hasher,
    limits: CONFORMANCE_LIMITS,
    deviceBound: deviceBoundFromEnv(env),
    modules: modules(env),
  }).fetch,
  hasher,
);
const server = await serve(app, {
  port: Number(env.PORT),
  hostname: "127.0.0.1",
});
console.log(`listening on ${JSON.stringify(server.address())}`);
process.once("SIGTERM", () => server.close(() => process.exit(0)));
