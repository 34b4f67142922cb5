/**
 * Bench support, not part of the package: the private deployment that
 * `bench/cluster.ts` measures. A PostgreSQL schema of its own on
 * 127.0.0.1:5432 (the credential database every instance shares), app
 * instances (`bench/_cluster_app.ts`) on free ports of 127.0.0.1, each a
 * child process, and the round-robin proxy (`bench/_cluster_proxy.ts`) in
 * front of them. The Redis Cluster comes from
 * `tests/support/redis_servers.ts`. Every process is stopped by its own
 * PID; the schema is dropped by {@linkcode SharedDatabase.drop}.
 *
 * @module
 */
import { default as postgres } from "postgres";
import { drizzle } from "drizzle-orm/postgres-js";
import { migrate, SQLCredentialStore } from "../stores/sql/mod.ts";
import { Pbkdf2Hasher } from "../mod.ts";
import { freePort } from "../tests/support/redis_servers.ts";
import {
  CLUSTER_HASH_ITERATIONS,
  type ClusterAppConfig,
} from "./_cluster_app.ts";
import type { ClusterProxyConfig } from "./_cluster_proxy.ts";

/** A child process started by this bench. */
export interface BenchChild {
  /** Its process id. */
  readonly pid: number;
  /** SIGTERM, then SIGKILL after `graceMs`; waits for the exit. */
  stop(graceMs?: number): Promise<void>;
}

/** One app instance. */
export interface Instance extends BenchChild {
  /** `A`, `B` or `C`. */
  readonly name: string;
  /** `http://127.0.0.1:<port>`. */
  readonly origin: string;
}

/** The credential database the instances share. */
export interface SharedDatabase {
  /** The schema's name. */
  readonly schema: string;
  /** Rows in `users` with this (normalised) email. */
  countUsers(email: string): Promise<number>;
  /** Drops the schema and closes the connections. */
  drop(): Promise<void>;
}

const PG = {
  host: "127.0.0.1",
  port: 5432,
  user: "postgres",
  database: "test",
  onnotice: () => {},
};

/**
 * Creates a schema of its own, migrates it once and adds verified users,
 * each with the same password (hashed once, at the bench's cost).
 *
 * @param emails The users to add.
 * @param password Their password.
 * @returns The database.
 */
export async function openSharedDatabase(
  emails: string[],
  password: string,
): Promise<SharedDatabase> {
  const schema = `cluster_bench_${crypto.randomUUID().slice(0, 8)}`;
  const admin = postgres({ ...PG, max: 1 });
  await admin.unsafe(`CREATE SCHEMA "${schema}"`);
  const sql = postgres({
    ...PG,
    max: 2,
    connection: { search_path: schema },
  });
  const drop = async () => {
    await sql.end({ timeout: 2 }).catch(() => {});
    await admin.unsafe(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
    await admin.end({ timeout: 2 });
  };
  try {
    const db = drizzle(sql);
    await migrate(db);
    const credentials = new SQLCredentialStore(db);
    const hash = await new Pbkdf2Hasher({ iterations: CLUSTER_HASH_ITERATIONS })
      .hash(password);
    const now = Date.now();
    for (const email of emails) {
      const id = `u_${crypto.randomUUID().replaceAll("-", "").slice(0, 16)}`;
      await credentials.create({
        id,
        email,
        passwordHash: hash,
        createdAt: now,
      });
      await credentials.markVerified(id, email, now);
    }
  } catch (error) {
    await drop();
    throw error;
  }
  return {
    schema,
    async countUsers(email) {
      const rows =
        await sql`SELECT count(*)::int AS n FROM users WHERE email = ${email}`;
      return rows[0].n as number;
    },
    drop,
  };
}

/**
 * Starts a bench script as a child process with its JSON configuration and
 * waits for its `{"ready":true}` line on stdout.
 */
async function spawnReady(
  script: string,
  config: unknown,
): Promise<BenchChild> {
  const child = new Deno.Command(Deno.execPath(), {
    args: [
      "run",
      "-A",
      `--import-map=${new URL("./import_map.json", import.meta.url).pathname}`,
      `--lock=${new URL("./deno.lock", import.meta.url).pathname}`,
      new URL(script, import.meta.url).pathname,
      JSON.stringify(config),
    ],
    stdout: "piped",
    stderr: "inherit",
  }).spawn();
  let exited = false;
  const status = child.status.then((s) => {
    exited = true;
    return s;
  });
  const stop = async (graceMs = 5000) => {
    if (!exited) {
      try {
        Deno.kill(child.pid, "SIGTERM");
      } catch { /* gone */ }
      const timer = setTimeout(() => {
        try {
          Deno.kill(child.pid, "SIGKILL");
        } catch { /* gone */ }
      }, graceMs);
      await status;
      clearTimeout(timer);
    }
  };
  const reader = child.stdout.pipeThrough(new TextDecoderStream()).getReader();
  let buffered = "";
  try {
    while (!buffered.split("\n").some((l) => l.startsWith('{"ready"'))) {
      const { value, done } = await reader.read();
      if (done) throw new Error(`${script} exited before it was ready`);
      buffered += value;
    }
  } catch (error) {
    await stop(0);
    throw error;
  }
  // Keep draining stdout so the child never blocks on a full pipe.
  (async () => {
    try {
      while (!(await reader.read()).done) { /* discard */ }
    } catch { /* closed */ }
  })();
  return { pid: child.pid, stop };
}

/** What {@linkcode startDeployment} starts. */
export interface Deployment {
  /** The proxy's origin: the app's public origin. */
  readonly origin: string;
  /** The instances behind it, `A`, `B`, `C`. */
  readonly instances: Instance[];
  /** Stops the proxy and every instance (by PID). */
  stop(): Promise<void>;
}

/** Options of {@linkcode startDeployment}. */
export interface DeploymentOptions {
  /** How many instances; 3. */
  instances?: number;
  /** Ports of the Redis Cluster's nodes. */
  redisPorts: number[];
  /** The shared schema. */
  schema: string;
  /** `revocationStaleness` in seconds; exact when absent. */
  revocationStaleness?: number;
  /** The store deadline, ms. */
  deadlineMs: number;
}

/**
 * Starts the instances (in parallel) and the proxy in front of them.
 *
 * @param options The cluster, the schema, the session configuration.
 * @returns The running deployment.
 */
export async function startDeployment(
  options: DeploymentOptions,
): Promise<Deployment> {
  const proxyPort = freePort();
  const origin = `http://127.0.0.1:${proxyPort}`;
  const names = "ABCDEFGH".slice(0, options.instances ?? 3).split("");
  const started: BenchChild[] = [];
  const stop = async () => {
    await Promise.all(started.map((c) => c.stop()));
  };
  try {
    const instances = await Promise.all(names.map(async (name) => {
      const port = freePort();
      const config: ClusterAppConfig = {
        port,
        name,
        redisPorts: options.redisPorts,
        schema: options.schema,
        appOrigin: origin,
        revocationStaleness: options.revocationStaleness,
        deadlineMs: options.deadlineMs,
      };
      const child = await spawnReady("./_cluster_app.ts", config);
      started.push(child);
      return { ...child, name, origin: `http://127.0.0.1:${port}` };
    }));
    const proxyConfig: ClusterProxyConfig = {
      port: proxyPort,
      upstreams: Object.fromEntries(instances.map((i) => [i.name, i.origin])),
    };
    started.push(await spawnReady("./_cluster_proxy.ts", proxyConfig));
    return { origin, instances, stop };
  } catch (error) {
    await stop();
    throw error;
  }
}
