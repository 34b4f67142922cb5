/**
 * How cost grows, for sizing a deployment:
 *
 * - `cache`: resolve time and heap with 10², 10⁴ and 10⁶ distinct live
 *   tokens (the verified-token cache holds 10⁴ by default: at its bound and
 *   past it), tokens drawn at random;
 * - `denylist`: the denylist's size per revoked session in Redis (a private
 *   `redis-server` started and stopped here, `INFO memory` and `MEMORY
 *   USAGE`) and in Deno KV (the database file), and resolve time with 10⁶
 *   revoked sessions present against an empty denylist;
 * - `login`: logins per second at full-strength PBKDF2 (600000 iterations),
 *   one process, and one process per core on both cores.
 *
 * Usage (prints markdown; `gc` is exposed so heap figures are after a
 * collection):
 *
 * ```sh
 * deno run -A --v8-flags=--expose-gc bench/growth_bench.ts [cache|denylist|login]
 * ```
 *
 * @module
 */
import {
  DenoKV,
  KVSessionStore,
  MemoryCredentialStore,
  MemoryKV,
  PasswordAuthenticator,
  Pbkdf2Hasher,
  SecretProvider,
  SessionManager,
} from "../mod.ts";
import { UpstashKV } from "../stores/upstash/mod.ts";

const SECRET = "OE4oAG13kLUZp20SYqZR2kcifh/ZW0UNU72ph11FvDw=";
const encoder = new TextEncoder();
const decoder = new TextDecoder();
const gc = (globalThis as { gc?: () => void }).gc ?? (() => {});
const heapMB = () => {
  gc();
  gc();
  return Deno.memoryUsage().heapUsed / 1048576;
};

/** µs per call of `f` over `n` calls, awaited one after another. */
async function timeEach(
  n: number,
  f: (i: number) => Promise<unknown>,
): Promise<number> {
  const t = performance.now();
  for (let i = 0; i < n; i++) await f(i);
  return (performance.now() - t) * 1000 / n;
}

/** p50 of single-call latencies, µs. */
async function p50Each(
  n: number,
  f: (i: number) => Promise<unknown>,
): Promise<number> {
  const xs: number[] = [];
  for (let i = 0; i < n; i++) {
    const t = performance.now();
    await f(i);
    xs.push((performance.now() - t) * 1000);
  }
  return xs.sort((a, b) => a - b)[Math.floor(n / 2)];
}

async function cache(): Promise<string> {
  const rows: string[] = [];
  for (const n of [100, 10_000, 1_000_000]) {
    const sessions = new SessionManager({
      secret: SecretProvider.fromValue(SECRET),
      store: new KVSessionStore(new MemoryKV()),
    });
    const tokens: string[] = new Array(n);
    // Tokens as a request brings them: flat strings decoded from bytes (an
    // issued token is a rope of its base64url pieces, ~1.4 KB of heap
    // until something flattens it).
    for (let i = 0; i < n; i++) {
      tokens[i] = decoder.decode(
        encoder.encode(await sessions.issue(`user_${i}`)),
      );
    }
    const heapTokens = heapMB();
    // First pass: every token resolved once (cold; fills the cache).
    const first = await timeEach(n, (i) => sessions.resolve(tokens[i]));
    const heapAfter = heapMB();
    // Then 200000 resolves of tokens drawn at random (hits while the set
    // fits the cache; mostly misses past it).
    const draws = 200_000;
    const order = new Uint32Array(draws);
    for (let i = 0; i < draws; i++) order[i] = Math.floor(Math.random() * n);
    const random = await timeEach(
      draws,
      (i) => sessions.resolve(tokens[order[i]]),
    );
    const cached = Math.min(n, 10_000);
    rows.push(
      `| ${n.toLocaleString("en")} | ${first.toFixed(2)} | ${
        random.toFixed(2)
      } | ${(100 * cached / n).toFixed(0)} % | ${
        (heapAfter - heapTokens).toFixed(1)
      } | ${((heapAfter - heapTokens) * 1048576 / cached).toFixed(0)} | ${
        heapAfter.toFixed(1)
      } |`,
    );
    console.log(rows.at(-1));
  }
  return `| distinct live tokens | first resolve of each, µs | random resolve, µs | share the cache can hold | heap held by the manager, MB | bytes per cached token | heap total, MB (tokens included) |
|---|---|---|---|---|---|---|
${rows.join("\n")}`;
}

async function redisCmd(port: number, ...args: string[]): Promise<string> {
  const out = await new Deno.Command("redis-cli", {
    args: ["-p", String(port), ...args],
  }).output();
  return new TextDecoder().decode(out.stdout).trim();
}

async function usedMemory(port: number): Promise<number> {
  const info = await redisCmd(port, "INFO", "memory");
  return Number(info.match(/used_memory:(\d+)/)![1]);
}

/** Starts a private redis-server on a free port; stop it by `kill()`. */
async function privateRedis() {
  const { freePort } = await import("../tests/conformance/_runner.ts");
  const port = freePort();
  const dir = await Deno.makeTempDir({ prefix: "growth-redis-" });
  const child = new Deno.Command("redis-server", {
    args: [
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
    ],
    stdout: "null",
    stderr: "null",
  }).spawn();
  for (let i = 0; i < 50; i++) {
    if ((await redisCmd(port, "PING")) === "PONG") break;
    await new Promise((r) => setTimeout(r, 100));
  }
  return {
    port,
    async kill() {
      child.kill("SIGTERM");
      await child.status;
      await Deno.remove(dir, { recursive: true }).catch(() => {});
    },
  };
}

/** Issues and revokes `n` sessions through the manager (the real path). */
async function revokeMany(sessions: SessionManager, n: number): Promise<void> {
  for (let i = 0; i < n; i++) {
    await sessions.revoke(await sessions.issue(`user_${i}`));
  }
}

/**
 * Resolve p50 against an empty and a full denylist, alternating rounds so
 * that load from elsewhere hits both alike; the lowest p50 of each.
 */
async function alternate(
  empty: () => Promise<number>,
  full: () => Promise<number>,
): Promise<[number, number]> {
  const a: number[] = [], b: number[] = [];
  for (let r = 0; r < 5; r++) {
    a.push(await empty());
    b.push(await full());
  }
  return [Math.min(...a), Math.min(...b)];
}

async function denylist(): Promise<string> {
  const { startUpstashBridge } = await import(
    "../tests/support/upstash_bridge.ts"
  );
  const lines: string[] = [];
  const N = 1_000_000;
  const SMALL = 5_000;

  // --- Redis: two private servers (one stays empty), stopped at the end.
  const empty = await privateRedis();
  const full = await privateRedis();
  try {
    const managers = [empty, full].map((r) => {
      const bridge = startUpstashBridge({ redisPort: r.port });
      const sessions = new SessionManager({
        secret: SecretProvider.fromValue(SECRET),
        store: new KVSessionStore(
          new UpstashKV({ url: bridge.url, token: bridge.token }),
        ),
      });
      return { bridge, sessions };
    });
    const before = await usedMemory(full.port);
    await revokeMany(managers[1].sessions, SMALL);
    const afterSmall = await usedMemory(full.port);
    const key = await redisCmd(full.port, "RANDOMKEY");
    const keyUsage = Number(await redisCmd(full.port, "MEMORY", "USAGE", key));
    const ttl = Number(await redisCmd(full.port, "TTL", key));
    // Up to 10⁶ with keys of the very same shape (prefix + 30-character
    // jti, value "1", a TTL), written inside Redis for speed.
    await redisCmd(
      full.port,
      "EVAL",
      `for i = 1, tonumber(ARGV[1]) do redis.call('SET', 'portcullis:deny:' .. string.format('%030d', i), '1', 'EX', 604800) end return 1`,
      "0",
      String(N - SMALL),
    );
    const afterLarge = await usedMemory(full.port);
    const dbsize = Number(await redisCmd(full.port, "DBSIZE"));
    const live = await managers[0].sessions.issue("user_live");
    const p50 = (m: SessionManager) => () =>
      p50Each(1000, () => m.resolve(live));
    await p50(managers[0].sessions)();
    await p50(managers[1].sessions)();
    const [emptyP50, fullP50] = await alternate(
      p50(managers[0].sessions),
      p50(managers[1].sessions),
    );
    for (const m of managers) await m.bridge.close();
    const version = (await redisCmd(full.port, "INFO", "server")).match(
      /redis_version:(\S+)/,
    )?.[1];
    lines.push(
      `Redis ${version} (private servers, no persistence): key \`${
        key.replace(/deny:.*/, "deny:<jti>")
      }\`, \`MEMORY USAGE\` ${keyUsage} bytes, TTL ${ttl} s (the token's remaining life).`,
      "",
      "| revoked sessions | used_memory growth | bytes per revoked session | resolve p50 (warm token, exact, through the bridge) |",
      "|---|---|---|---|",
      `| 0 | — | — | ${emptyP50.toFixed(0)} µs |`,
      `| ${SMALL.toLocaleString("en")} (through \`revoke\`) | ${
        ((afterSmall - before) / 1048576).toFixed(2)
      } MB | ${((afterSmall - before) / SMALL).toFixed(0)} | — |`,
      `| ${dbsize.toLocaleString("en")} | ${
        ((afterLarge - before) / 1048576).toFixed(1)
      } MB | ${((afterLarge - before) / dbsize).toFixed(0)} | ${
        fullP50.toFixed(0)
      } µs (${(fullP50 / emptyP50).toFixed(2)}×) |`,
      "",
    );
  } finally {
    await empty.kill();
    await full.kill();
  }

  // --- Deno KV: two database files of their own (one stays empty).
  const kvDir = await Deno.makeTempDir({ prefix: "growth-kv-" });
  const size = async (prefix: string) => {
    let total = 0;
    for await (const e of Deno.readDir(kvDir)) {
      if (e.name.startsWith(prefix)) {
        total += (await Deno.stat(`${kvDir}/${e.name}`)).size;
      }
    }
    return total;
  };
  try {
    const stores = [
      await DenoKV.open(`${kvDir}/empty.sqlite3`),
      await DenoKV.open(`${kvDir}/full.sqlite3`),
    ];
    const managers = stores.map((store) =>
      new SessionManager({
        secret: SecretProvider.fromValue(SECRET),
        store: new KVSessionStore(store),
      })
    );
    const live = await managers[0].issue("user_live");
    await managers[1].resolve(live);
    const before = await size("full");
    await revokeMany(managers[1], SMALL);
    const afterSmall = await size("full");
    // The rest with the same key and value shape as DenoKV.put writes,
    // 1000 to an atomic batch.
    const raw = await Deno.openKv(`${kvDir}/full.sqlite3`);
    const exp = Date.now() + 604800_000;
    for (let i = 0; i < N - SMALL; i += 1000) {
      const op = raw.atomic();
      for (let j = i; j < Math.min(i + 1000, N - SMALL); j++) {
        op.set(
          ["portcullis", `portcullis:deny:${String(j).padStart(30, "0")}`],
          {
            v: "1",
            e: exp,
          },
          { expireIn: 604800_000 },
        );
      }
      await op.commit();
    }
    raw.close();
    const p50 = (m: SessionManager) => () =>
      p50Each(2000, () => m.resolve(live));
    await p50(managers[0])();
    await p50(managers[1])();
    const [emptyP50, fullP50] = await alternate(
      p50(managers[0]),
      p50(managers[1]),
    );
    for (const s of stores) s.close();
    const afterLarge = await size("full");
    lines.push(
      `Deno KV ${Deno.version.deno} (local SQLite-backed files; database and WAL counted):`,
      "",
      "| revoked sessions | file growth | bytes per revoked session | resolve p50 (warm token, exact) |",
      "|---|---|---|---|",
      `| 0 | — | — | ${emptyP50.toFixed(0)} µs |`,
      `| ${SMALL.toLocaleString("en")} (through \`revoke\`) | ${
        ((afterSmall - before) / 1048576).toFixed(2)
      } MB | ${((afterSmall - before) / SMALL).toFixed(0)} | — |`,
      `| ${N.toLocaleString("en")} | ${
        ((afterLarge - before) / 1048576).toFixed(1)
      } MB | ${((afterLarge - before) / N).toFixed(0)} | ${
        fullP50.toFixed(0)
      } µs (${(fullP50 / emptyP50).toFixed(2)}×) |`,
    );
  } finally {
    await Deno.remove(kvDir, { recursive: true }).catch(() => {});
  }
  return lines.join("\n");
}

/** One login process: sequential logins for `SECONDS`, prints the count. */
async function loginWorker(): Promise<void> {
  const credentials = new MemoryCredentialStore();
  const auth = new PasswordAuthenticator({
    credentials,
    hasher: new Pbkdf2Hasher(),
  });
  await auth.register("a@example.com", "correct horse battery staple");
  const seconds = Number(Deno.env.get("SECONDS") ?? 8);
  const parallel = Number(Deno.env.get("PARALLEL") ?? 1);
  const cpuStart = (await import("./_load.ts")).cpuNs(Deno.pid) / 1e9;
  const end = performance.now() + seconds * 1000;
  let n = 0;
  await Promise.all(
    Array.from({ length: parallel }, async () => {
      while (performance.now() < end) {
        if (
          await auth.authenticate(
            "a@example.com",
            "correct horse battery staple",
          )
        ) n++;
      }
    }),
  );
  // CPU seconds this process used (all threads): logins per CPU-second is
  // the per-core capacity, whatever else shares the machine.
  const { cpuNs } = await import("./_load.ts");
  const cpuS = cpuNs(Deno.pid) / 1e9 - cpuStart;
  console.log(JSON.stringify({ rate: n / seconds, perCpuSecond: n / cpuS }));
}

async function login(): Promise<string> {
  type Rate = { rate: number; perCpuSecond: number };
  const run = async (core: string | null, parallel: number): Promise<Rate> => {
    const cmd = [
      Deno.execPath(),
      "run",
      "-A",
      import.meta.filename!,
      "login-worker",
    ];
    const out = await new Deno.Command(core ? "taskset" : cmd[0], {
      args: core ? ["-c", core, ...cmd] : cmd.slice(1),
      env: { PARALLEL: String(parallel) },
    }).output();
    const text = new TextDecoder().decode(out.stdout);
    return JSON.parse(text.trim().split("\n").at(-1)!);
  };
  const one = await run("0", 1);
  const oneTwo = await run("0", 2);
  const [a, b] = await Promise.all([run("0", 1), run("1", 1)]);
  const unpinned = await run(null, 2);
  const row = (name: string, rates: Rate[], cores: number) => {
    const total = rates.reduce((n, r) => n + r.rate, 0);
    const cpu = rates.reduce((n, r) => n + r.perCpuSecond, 0) / rates.length;
    return `| ${name} | ${total.toFixed(1)} | ${(total / cores).toFixed(1)} | ${
      cpu.toFixed(1)
    } |`;
  };
  return `| setup | logins/s (wall clock) | logins/s per core (wall clock) | logins per CPU-second |
|---|---|---|---|
${row("1 process on core 0, 1 login at a time", [one], 1)}
${row("1 process on core 0, 2 logins at a time", [oneTwo], 1)}
${row("2 processes, one per core, 1 login at a time each", [a, b], 2)}
${row("1 process, unpinned (both cores), 2 logins at a time", [unpinned], 2)}`;
}

const what = Deno.args[0];
if (what === "login-worker") await loginWorker();
else {
  if (!what || what === "cache") console.log("\n" + await cache() + "\n");
  if (!what || what === "denylist") console.log("\n" + await denylist() + "\n");
  if (!what || what === "login") console.log("\n" + await login() + "\n");
}
