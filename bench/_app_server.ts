/**
 * Bench support, not part of the package: the reference app (`accounts()`,
 * as `examples/app/main.ts` wires it) on a chosen user store and key-value
 * store, for `bench/sql_memory.ts`, `bench/soak.ts` and `bench/chaos.ts`.
 * Those scripts start it as a child process:
 *
 * ```sh
 * deno run -A bench/_app_server.ts '{"port":8123,"users":"libsql-file","kv":"denokv","dataDir":"/tmp/x"}'
 * ```
 *
 * It makes `userCount` verified users (one password, hashed once with the
 * app's default hasher), issues one session per user, prints one JSON line
 * `{"ready":true,"tokens":[…],"emails":[…],"password":"…"}` on stdout and
 * serves until it is killed. `GET /__bench/memory` runs a full garbage
 * collection (the parent starts it with `--expose-gc`) and answers
 * `Deno.memoryUsage()`. Rate limits are raised far above the traffic
 * (every bench client comes from 127.0.0.1, one address); everything else
 * is the app's default.
 *
 * Users (`users`): `memory`, `libsql-file`, `libsql-memory` (both through
 * `@libsql/client`, as main.ts did before), `sqlite-file` and
 * `sqlite-memory` (`openLocalSQLite` from `packages/accounts/deno/_node_sqlite.ts`:
 * `node:sqlite`, statements prepared once, as main.ts now), `pglite`, `postgres` (127.0.0.1:5432, a schema of its
 * own, dropped on SIGTERM), `mariadb` (127.0.0.1:3306, tables with a prefix
 * of their own, dropped on SIGTERM).
 *
 * Key-value store (`kv`): `memory`, `denokv` (a file in `dataDir`, as
 * main.ts), `upstash` (`upstashUrl`, `upstashToken`; the client's own
 * retries off, see `bench/RESULTS_soak.md`), `redis` (`redisPort`;
 * `RedisKV` over `@redis/client`).
 *
 * @module
 */
import {
  DenoKV,
  type KeyValueStore,
  KVSessionStore,
  MemoryCredentialStore,
  MemoryKV,
  Pbkdf2Hasher,
  SecretProvider,
  SessionManager,
} from "../mod.ts";
import type { CredentialStore } from "../lib/authn/credential_store.ts";
import { MemoryVerificationTokenStore } from "../lib/verification/mod.ts";
import type { VerificationTokenStore } from "../lib/verification/verification_token_store.ts";
import {
  accounts,
  type HashingGateOptions,
  type Mailer,
} from "../packages/accounts/mod.ts";
import { MemorySecurityEventStore } from "../lib/events/mod.ts";
import { modules } from "../examples/app/modules.ts";

/** What the parent passes as the first argument (JSON). */
export interface ServerConfig {
  port: number;
  users:
    | "memory"
    | "libsql-file"
    | "libsql-memory"
    | "sqlite-file"
    | "sqlite-memory"
    | "pglite"
    | "postgres"
    | "mariadb";
  kv: "memory" | "denokv" | "upstash" | "redis";
  dataDir: string;
  userCount?: number;
  upstashUrl?: string;
  upstashToken?: string;
  /** `@upstash/redis` retries; 0 by default here (the client's own is 5). */
  upstashRetries?: number;
  redisPort?: number;
  /**
   * The proxies whose `X-Forwarded-For` is believed (`trustedProxies` of
   * `accounts()`); default none, every client one address.
   */
  trustedProxies?: string;
  /** The bound on password hashing (`hashing` of `accounts()`). */
  hashing?: HashingGateOptions | false;
}

/** What the server prints once it listens. */
export interface ServerReady {
  ready: true;
  pid: number;
  tokens: string[];
  emails: string[];
  password: string;
}

const PASSWORD = "soak test password, long enough 7291";
const SECRET = "ujqaDYixbE92K2W8Aq6AXdUOOiQEMOU/O1vD04tJn5M";

interface Opened {
  credentials: CredentialStore;
  tokens: VerificationTokenStore;
  close: () => Promise<void>;
}

async function openUsers(config: ServerConfig): Promise<Opened> {
  const { migrate, SQLCredentialStore, SQLVerificationTokenStore } =
    await import("../stores/sql/mod.ts");
  const sqlStores = async (
    db: Parameters<typeof migrate>[0],
    close: () => Promise<void>,
    tablePrefix = "",
  ): Promise<Opened> => {
    await migrate(db, { tablePrefix });
    return {
      credentials: new SQLCredentialStore(db, { tablePrefix }),
      tokens: new SQLVerificationTokenStore(db, { tablePrefix }),
      close,
    };
  };
  switch (config.users) {
    case "memory":
      return {
        credentials: new MemoryCredentialStore(),
        tokens: new MemoryVerificationTokenStore(),
        close: () => Promise.resolve(),
      };
    case "libsql-file":
    case "libsql-memory": {
      const { createClient } = await import("@libsql/client");
      const { drizzle } = await import("drizzle-orm/libsql");
      const client = createClient({
        url: config.users === "libsql-file"
          ? `file:${config.dataDir}/app.db`
          : ":memory:",
      });
      return await sqlStores(drizzle(client), () => {
        client.close();
        return Promise.resolve();
      });
    }
    case "sqlite-file":
    case "sqlite-memory": {
      const { openLocalSQLite } = await import(
        "../packages/accounts/deno/_node_sqlite.ts"
      );
      const opened = openLocalSQLite(
        config.users === "sqlite-file"
          ? `${config.dataDir}/app.db`
          : ":memory:",
      );
      return await sqlStores(opened.db, () => {
        opened.close();
        return Promise.resolve();
      });
    }
    case "pglite": {
      const { PGlite } = await import("@electric-sql/pglite");
      const { drizzle } = await import("drizzle-orm/pglite");
      const client = new PGlite();
      return await sqlStores(drizzle(client), () => client.close());
    }
    case "postgres": {
      const { default: postgres } = await import("postgres");
      const { drizzle } = await import("drizzle-orm/postgres-js");
      const schema = `soak_${crypto.randomUUID().replaceAll("-", "")}`;
      const base = {
        host: "127.0.0.1",
        port: 5432,
        user: "postgres",
        database: "test",
        onnotice: () => {},
      };
      const admin = postgres({ ...base, max: 1 });
      await admin.unsafe(`CREATE SCHEMA "${schema}"`);
      const client = postgres({
        ...base,
        max: 4,
        connection: { search_path: schema },
      });
      return await sqlStores(drizzle(client), async () => {
        await client.end();
        await admin.unsafe(`DROP SCHEMA "${schema}" CASCADE`);
        await admin.end();
      });
    }
    case "mariadb": {
      const { default: mysql } = await import("mysql2/promise");
      const { drizzle } = await import("drizzle-orm/mysql2");
      const prefix = `soak${crypto.randomUUID().slice(0, 8)}_`;
      const pool = mysql.createPool({
        host: "127.0.0.1",
        port: 3306,
        user: "root",
        database: "test",
        connectionLimit: 4,
      });
      return await sqlStores(drizzle({ client: pool }), async () => {
        for (const t of ["verification_tokens", "users"]) {
          await pool.query(`DROP TABLE IF EXISTS \`${prefix}${t}\``);
        }
        await pool.end();
      }, prefix);
    }
  }
}

async function openKV(
  config: ServerConfig,
): Promise<{ kv: KeyValueStore; close: () => Promise<void> }> {
  switch (config.kv) {
    case "memory":
      return { kv: new MemoryKV(), close: () => Promise.resolve() };
    case "denokv": {
      const kv = await DenoKV.open(`${config.dataDir}/kv.sqlite3`);
      return { kv, close: () => Promise.resolve(kv.close()) };
    }
    case "upstash": {
      const { Redis } = await import("@upstash/redis");
      const { UpstashKV } = await import("../stores/upstash/mod.ts");
      // The client retries a failed request 5 times with a growing backoff
      // by default (about 2.5 s in all), which would hold a request past
      // the store deadline while Redis is down: one try, and the session
      // layer's deadline decides.
      const redis = new Redis({
        url: config.upstashUrl!,
        token: config.upstashToken!,
        automaticDeserialization: false,
        enableTelemetry: false,
        retry: { retries: config.upstashRetries ?? 0 },
      });
      return {
        kv: new UpstashKV({ redis, prefix: "soak:" }),
        close: () => Promise.resolve(),
      };
    }
    case "redis": {
      const { createClient } = await import("@redis/client");
      const { RedisKV } = await import("../stores/redis/mod.ts");
      const client = createClient({
        socket: {
          host: "127.0.0.1",
          port: config.redisPort,
          connectTimeout: 1000,
          // Keep reconnecting every 250 ms while Redis is down.
          reconnectStrategy: () => 250,
        },
        // Fail commands at once while disconnected instead of queueing them.
        disableOfflineQueue: true,
      });
      client.on("error", () => {});
      await client.connect();
      return {
        kv: new RedisKV(client, { prefix: "soak:", timeoutMs: 2000 }),
        close: () => Promise.resolve(client.destroy()),
      };
    }
  }
}

async function main(): Promise<void> {
  const config = JSON.parse(Deno.args[0]) as ServerConfig;
  await Deno.mkdir(config.dataDir, { recursive: true });
  const users = await openUsers(config);
  const store = await openKV(config);
  const secret = SecretProvider.fromValue(SECRET);
  const sessions = new SessionManager({
    secret,
    store: new KVSessionStore(store.kv),
  });
  const mailer: Mailer = { send: () => Promise.resolve() };
  const many = { max: 1_000_000_000, windowSeconds: 60 };
  const app = accounts({
    // Memory stores: the modules that keep SQL tables stay out.
    modules: modules({
      SIGN_IN_METHODS: "off",
      API_KEYS: "off",
      CONSOLE: "off",
    }),
    events: new MemorySecurityEventStore(),
    sessions,
    secret,
    credentials: users.credentials,
    tokens: users.tokens,
    kv: store.kv,
    mailer,
    appOrigin: `http://127.0.0.1:${config.port}`,
    cookieSecure: false,
    log: () => {},
    clientAddress: config.trustedProxies === undefined
      ? () => "127.0.0.1"
      : (_req, info) =>
        (info as Deno.ServeHandlerInfo<Deno.NetAddr>).remoteAddr.hostname,
    trustedProxies: config.trustedProxies,
    hashing: config.hashing,
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
    },
  });

  const hash = await new Pbkdf2Hasher().hash(PASSWORD);
  const tokens: string[] = [];
  const emails: string[] = [];
  const now = Date.now();
  for (let i = 0; i < (config.userCount ?? 200); i++) {
    const id = `u${i}_${crypto.randomUUID().slice(0, 8)}`;
    const email = `${id}@soak.example`;
    await users.credentials.create({
      id,
      email,
      passwordHash: hash,
      createdAt: now,
    });
    await users.credentials.markVerified(id, email, now);
    tokens.push(await sessions.issue(id));
    emails.push(email);
  }

  // deno-lint-ignore no-explicit-any
  const gc = (globalThis as any).gc as (() => void) | undefined;
  const server = Deno.serve(
    { hostname: "127.0.0.1", port: config.port, onListen() {} },
    (req, info) => {
      // Bench only: a full GC, then the process's memory figures, so a
      // sampler can tell memory that garbage collection gives back from
      // memory that stays.
      if (new URL(req.url).pathname === "/__bench/memory") {
        gc?.();
        return Response.json({ ...Deno.memoryUsage(), gc: gc !== undefined });
      }
      return app.fetch(req, info);
    },
  );
  const stop = async () => {
    await server.shutdown();
    await store.close();
    await users.close();
    Deno.exit(0);
  };
  Deno.addSignalListener("SIGTERM", stop);
  Deno.addSignalListener("SIGINT", stop);
  const ready: ServerReady = {
    ready: true,
    pid: Deno.pid,
    tokens,
    emails,
    password: PASSWORD,
  };
  console.log(JSON.stringify(ready));
}

await main();
