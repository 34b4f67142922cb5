/**
 * Test support: private `redis-server` processes on free ports of
 * 127.0.0.1, for tests that stop, pause or reshape Redis (outages, a local
 * cluster) without touching the shared Redis on 6379. Each process is
 * stopped by its own PID.
 *
 * @module
 */
import { missing } from "./services.ts";

/** One private `redis-server`. */
export interface PrivateRedis {
  /** Its port on 127.0.0.1. */
  port: number;
  /** Its process id. */
  pid: number;
  /** Stops it with SIGKILL (an outage, not a shutdown) and waits for it. */
  kill(): Promise<void>;
  /** Freezes it with SIGSTOP: the socket stays open, nothing answers. */
  pause(): void;
  /** Undoes {@linkcode PrivateRedis.pause}. */
  resume(): void;
}

/** Options of {@linkcode startRedis}. */
export interface StartRedisOptions {
  /** The port; a free one unless told. */
  port?: number;
  /** Starts it with `--cluster-enabled yes`. */
  cluster?: boolean;
  /** Directory for its files (cluster config); a fresh temp dir unless told. */
  dir?: string;
}

/**
 * Whether `redis-server` and `redis-cli` are on PATH; reports them missing
 * (a failure under CI) when not.
 *
 * @returns `true` when both run.
 */
export async function requireRedisBinaries(): Promise<boolean> {
  for (const bin of ["redis-server", "redis-cli"]) {
    try {
      const { success } = await new Deno.Command(bin, {
        args: ["--version"],
        stdout: "null",
        stderr: "null",
      }).output();
      if (!success) return missing(`${bin} --version failed`);
    } catch {
      return missing(`${bin} is not on PATH`);
    }
  }
  return true;
}

/**
 * A TCP port on 127.0.0.1 that nothing listens on right now.
 *
 * @returns The port.
 */
export function freePort(): number {
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const { port } = listener.addr as Deno.NetAddr;
  listener.close();
  return port;
}

/**
 * Sends one inline command over a fresh connection and reads the first
 * reply chunk.
 *
 * @param port The server's port.
 * @param command Such as `"PING"`.
 * @returns The raw reply text.
 */
export async function rawCommand(
  port: number,
  command: string,
): Promise<string> {
  const conn = await Deno.connect({ hostname: "127.0.0.1", port });
  try {
    await conn.write(new TextEncoder().encode(command + "\r\n"));
    const buf = new Uint8Array(64 * 1024);
    const n = await conn.read(buf);
    return new TextDecoder().decode(buf.subarray(0, n ?? 0));
  } finally {
    conn.close();
  }
}

async function waitFor(
  what: string,
  check: () => Promise<boolean>,
  timeoutMs = 10_000,
): Promise<void> {
  const until = Date.now() + timeoutMs;
  while (Date.now() < until) {
    try {
      if (await check()) return;
    } catch {
      // not up yet
    }
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`Timed out waiting for ${what}`);
}

/**
 * Starts a private `redis-server` without persistence and waits until it
 * answers `PING`.
 *
 * @param options See {@linkcode StartRedisOptions}.
 * @returns The running server.
 */
export async function startRedis(
  options: StartRedisOptions = {},
): Promise<PrivateRedis> {
  const port = options.port ?? freePort();
  const dir = options.dir ?? await Deno.makeTempDir({ prefix: "redis-" });
  const args = [
    "--port",
    String(port),
    "--bind",
    "127.0.0.1",
    "--save",
    "",
    "--appendonly",
    "no",
    "--dir",
    dir,
  ];
  if (options.cluster) {
    args.push(
      "--cluster-enabled",
      "yes",
      "--cluster-config-file",
      `nodes-${port}.conf`,
      // Faster gossip, so that a new cluster settles in seconds.
      "--cluster-node-timeout",
      "1000",
    );
  }
  const child = new Deno.Command("redis-server", {
    args,
    stdout: "null",
    stderr: "null",
  }).spawn();
  let exited = false;
  const status = child.status.then((s) => {
    exited = true;
    return s;
  });
  const server: PrivateRedis = {
    port,
    pid: child.pid,
    async kill() {
      if (!exited) {
        try {
          Deno.kill(child.pid, "SIGCONT");
          child.kill("SIGKILL");
        } catch {
          // already gone
        }
      }
      await status;
    },
    pause: () => Deno.kill(child.pid, "SIGSTOP"),
    resume: () => Deno.kill(child.pid, "SIGCONT"),
  };
  try {
    await waitFor(`redis-server on ${port}`, async () => {
      if (exited) throw new Error("exited");
      return (await rawCommand(port, "PING")).startsWith("+PONG");
    });
  } catch (error) {
    await server.kill();
    throw error;
  }
  return server;
}

/** A private Redis Cluster of primaries without replicas. */
export interface PrivateCluster {
  /** Its nodes, each a {@linkcode PrivateRedis}. */
  nodes: PrivateRedis[];
  /** Kills every node and removes the config directory. */
  stop(): Promise<void>;
}

/**
 * Starts `primaries * (1 + replicas)` cluster-enabled servers, joins them
 * with `redis-cli --cluster create`, and waits until every node reports
 * `cluster_state:ok` (and every replica has synced with its primary).
 *
 * @param primaries How many primaries; Redis needs at least 3.
 * @param replicas Replicas per primary.
 * @returns The running cluster.
 */
export async function startRedisCluster(
  primaries = 3,
  replicas = 0,
): Promise<PrivateCluster> {
  const size = primaries * (1 + replicas);
  const dir = await Deno.makeTempDir({ prefix: "redis-cluster-" });
  const nodes: PrivateRedis[] = [];
  const stop = async () => {
    await Promise.all(nodes.map((n) => n.kill()));
    await Deno.remove(dir, { recursive: true }).catch(() => {});
  };
  try {
    for (let i = 0; i < size; i++) {
      nodes.push(await startRedis({ cluster: true, dir }));
    }
    const created = await new Deno.Command("redis-cli", {
      args: [
        "--cluster",
        "create",
        ...nodes.map((n) => `127.0.0.1:${n.port}`),
        "--cluster-replicas",
        String(replicas),
        "--cluster-yes",
      ],
      stdout: "piped",
      stderr: "piped",
    }).output();
    if (!created.success) {
      throw new Error(
        `redis-cli --cluster create failed: ${
          new TextDecoder().decode(created.stderr)
        }`,
      );
    }
    for (const n of nodes) {
      await waitFor(
        `cluster_state:ok on ${n.port}`,
        async () =>
          (await rawCommand(n.port, "CLUSTER INFO")).includes(
            "cluster_state:ok",
          ),
      );
      await waitFor(`replication on ${n.port}`, async () => {
        const info = await rawCommand(n.port, "INFO replication");
        return info.includes("role:master") ||
          info.includes("master_link_status:up");
      });
    }
    // Every node must know every replica (gossip) before a client asks any
    // node for the topology.
    for (const n of nodes) {
      await waitFor(`replicas known to ${n.port}`, async () => {
        const known = (await rawCommand(n.port, "CLUSTER NODES"))
          .split("\n").filter((line) => /[ ,]slave /.test(line)).length;
        return known === primaries * replicas;
      }, 30_000);
    }
  } catch (error) {
    await stop();
    throw error;
  }
  return { nodes, stop };
}
