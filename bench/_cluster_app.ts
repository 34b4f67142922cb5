/**
 * Bench support, not part of the package: one instance of the reference app
 * (`accounts()`, wired as `examples/app/main.ts` wires it) whose session
 * denylist, rate limits, notes and session list live on a Redis Cluster
 * through `@portcullis/redis`'s `RedisKV`, and whose users, single-use
 * tokens, security events and sign-in methods live in one PostgreSQL
 * schema shared by every instance. `bench/cluster.ts` starts three:
 *
 * ```sh
 * deno run -A --import-map=bench/import_map.json --lock=bench/deno.lock \
 *   bench/_cluster_app.ts '{"port":8123,"name":"A","redisPorts":[7000],"schema":"cluster_x","appOrigin":"http://127.0.0.1:8100"}'
 * ```
 *
 * It prints one line `{"ready":true,"pid":…}` once it listens, and stops on
 * SIGTERM (server, Redis client, PostgreSQL pool). The schema must already
 * be migrated (the parent migrates it once, so that three instances do not
 * race on the migration).
 *
 * What differs from `main.ts`, and why: the password hasher is PBKDF2 at
 * 1,000 iterations (the bench measures the shared stores, not the hasher;
 * `bench/RESULTS_authn.md` measures the hasher); the rate limits are raised
 * far above the traffic (every bench client comes through the proxy from
 * 127.0.0.1, one address); no mail is sent. The sign-in methods are the
 * defaults of `setupModules` over the app's modules with an empty environment (TOTP and
 * passkeys on, no OpenID provider), as `main.ts` starts.
 *
 * @module
 */
import { createCluster } from "@redis/client";
import { default as postgres } from "postgres";
import { drizzle } from "drizzle-orm/postgres-js";
import {
  KVSessionStore,
  Pbkdf2Hasher,
  SecretProvider,
  SessionManager,
} from "../mod.ts";
import { RedisKV } from "../stores/redis/mod.ts";
import {} from "../stores/sql/mod.ts";
import { accounts } from "../packages/accounts/mod.ts";
import { modules } from "../examples/app/modules.ts";

/** What the parent passes as the first argument (JSON). */
export interface ClusterAppConfig {
  /** The port this instance listens on (127.0.0.1). */
  port: number;
  /** A short name for log lines (`A`, `B`, `C`). */
  name: string;
  /** Ports of the cluster's nodes on 127.0.0.1 (any of them is a seed). */
  redisPorts: number[];
  /** The PostgreSQL schema (127.0.0.1:5432, database `test`), migrated. */
  schema: string;
  /** The public origin: the proxy's. */
  appOrigin: string;
  /** `revocationStaleness` in seconds; exact when absent. */
  revocationStaleness?: number;
  /** The session layer's and `RedisKV`'s deadline, ms; default 2000. */
  deadlineMs?: number;
}

/** The secret every instance shares (bench only, never a real one). */
export const CLUSTER_SECRET = "c01QTlNJ9m9lS8L0zGKMUBYmEb6/oROor8JkP3gpXlc";

/** The iteration count of the bench's PBKDF2 hasher. */
export const CLUSTER_HASH_ITERATIONS = 1000;

async function main(): Promise<void> {
  const config = JSON.parse(Deno.args[0]) as ClusterAppConfig;
  const deadlineMs = config.deadlineMs ?? 2000;

  const redis = createCluster({
    rootNodes: config.redisPorts.map((port) => ({
      url: `redis://127.0.0.1:${port}`,
    })),
    defaults: {
      // Fail at once while a node is unreachable instead of queueing, and
      // try to reconnect every 100 ms (the failover takes about a second).
      disableOfflineQueue: true,
      socket: { connectTimeout: 500, reconnectStrategy: () => 100 },
    },
  });
  redis.on("error", () => {});
  await redis.connect();
  const kv = new RedisKV(redis, { prefix: "bench:", timeoutMs: deadlineMs });

  const sql = postgres({
    host: "127.0.0.1",
    port: 5432,
    user: "postgres",
    database: "test",
    max: 4,
    onnotice: () => {},
    connection: { search_path: config.schema },
  });
  const db = drizzle(sql);

  const secret = SecretProvider.fromValue(CLUSTER_SECRET);
  const sessionStore = new KVSessionStore(kv);
  const sessions = new SessionManager({
    secret,
    store: sessionStore,
    storeTimeoutMs: deadlineMs,
    ...(config.revocationStaleness === undefined
      ? {}
      : { revocationStaleness: config.revocationStaleness }),
  });
  const many = { max: 1_000_000_000, windowSeconds: 60 };
  const app = accounts({
    modules: modules({}),
    sessions,
    sessionStore,
    secret,
    db,
    kv,
    mailer: { send: () => Promise.resolve() },
    appOrigin: config.appOrigin,
    cookieSecure: false,
    hasher: new Pbkdf2Hasher({ iterations: CLUSTER_HASH_ITERATIONS }),
    clientAddress: () => "127.0.0.1",
    // Operational lines (a store unavailable during the failover) would
    // flood the terminal; anything else is worth seeing.
    log: (line) => {
      if (!line.startsWith("store unavailable")) {
        console.error(`[${config.name}] ${line}`);
      }
    },
    limits: {
      loginPerAccount: {
        freeFailures: 1_000_000,
        baseDelaySeconds: 1,
        maxDelaySeconds: 1,
        hardStop: 100,
      },
      loginPerAddress: many,
      passwordChangePerAccount: many,
      passwordChangePerAddress: many,
      registerPerAddress: many,
      resendPerAccount: many,
      verifyPerAddress: many,
      resetPerEmail: many,
      resetPerAddress: many,
    },
  });

  const server = Deno.serve(
    { hostname: "127.0.0.1", port: config.port, onListen() {} },
    app.fetch,
  );
  const stop = async () => {
    await server.shutdown();
    redis.destroy();
    await sql.end({ timeout: 2 });
    Deno.exit(0);
  };
  Deno.addSignalListener("SIGTERM", stop);
  Deno.addSignalListener("SIGINT", stop);
  console.log(JSON.stringify({ ready: true, pid: Deno.pid }));
}

if (import.meta.main) await main();
