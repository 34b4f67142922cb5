/**
 * Chaos: the reference app's sessions on a private Redis that goes away
 * for 10 s under load (issue 9, item 11).
 *
 * ```sh
 * deno run -A bench/chaos.ts --store upstash       # Upstash REST protocol (bridge)
 * deno run -A bench/chaos.ts --store redis         # RedisKV over @redis/client
 * deno run -A bench/chaos.ts --store upstash --fault stop --upstash-retries 5
 * ```
 *
 * The script starts its own `redis-server` on a free port of 127.0.0.1 (no
 * persistence) and stops it by its PID; it never touches another Redis.
 * With `--store upstash` it also runs the Upstash REST bridge
 * (`tests/support/upstash_bridge.ts`) in front of that Redis, and the app
 * uses `UpstashKV` over `@upstash/redis` with the client's retries off
 * (`retry: { retries: 0 }`; `--upstash-retries N` puts N back); with
 * `--store redis` the app uses `RedisKV` over `@redis/client` (offline queue
 * off, reconnect every 250 ms, `timeoutMs` 2000).
 *
 * Timeline: `--before` (10) s of load, then the fault for `--down` (10) s,
 * then Redis again and `--after` (15) s of load. The fault is `kill`
 * (SIGKILL, then a new `redis-server` on the same port) or `stop`
 * (SIGSTOP, then SIGCONT: a Redis that hangs without closing its sockets).
 * Load: `--connections` (16) clients on `GET /api/me` with the warm Bearer
 * tokens of 200 users, each request with a 30 s client timeout.
 *
 * Reports: 200s answered to requests sent while Redis was down (must be 0);
 * requests answered more than `--slack-ms` (500; the machine is shared)
 * after the store deadline (`--deadline-ms`, 2000; must be 0), all those
 * slower than the deadline, and the slowest; seconds from Redis back until the first 200 and until
 * the last non-200; 5xx other than 503 (must be 0); statuses per second.
 *
 * @module
 */
import { flags, freePort, machineNote, startApp } from "./_app_load.ts";
import { startUpstashBridge } from "../tests/support/upstash_bridge.ts";

const args = flags(Deno.args);
const store = (args.store ?? "upstash") as "upstash" | "redis";
const fault = (args.fault ?? "kill") as "kill" | "stop";
const before = Number(args.before ?? 10);
const down = Number(args.down ?? 10);
const after = Number(args.after ?? 15);
const connections = Number(args.connections ?? 16);
const deadlineMs = Number(args["deadline-ms"] ?? 2000);
const slackMs = Number(args["slack-ms"] ?? 500);
const upstashRetries = Number(args["upstash-retries"] ?? 0);

const redisPort = freePort();

function startRedis(): Deno.ChildProcess {
  return new Deno.Command("redis-server", {
    args: [
      "--port",
      String(redisPort),
      "--bind",
      "127.0.0.1",
      "--save",
      "",
      "--appendonly",
      "no",
    ],
    stdout: "null",
    stderr: "null",
  }).spawn();
}

/** Waits until the private Redis answers PING. */
async function waitForRedis(): Promise<void> {
  const until = Date.now() + 10_000;
  while (Date.now() < until) {
    try {
      const conn = await Deno.connect({
        hostname: "127.0.0.1",
        port: redisPort,
      });
      await conn.write(new TextEncoder().encode("PING\r\n"));
      const buf = new Uint8Array(16);
      const n = await conn.read(buf);
      conn.close();
      if (
        n && new TextDecoder().decode(buf.subarray(0, n)).startsWith("+PONG")
      ) {
        return;
      }
    } catch { /* not yet */ }
    await new Promise((r) => setTimeout(r, 20));
  }
  throw new Error("private redis-server did not start");
}

let redis = startRedis();
await waitForRedis();
const bridge = store === "upstash"
  ? startUpstashBridge({ redisPort })
  : undefined;
const app = await startApp({
  users: "sqlite-file",
  kv: store,
  redisPort,
  upstashUrl: bridge?.url,
  upstashToken: bridge?.token,
  upstashRetries,
});
const tokens = app.ready.tokens;

interface Done {
  start: number;
  end: number;
  status: number;
}
const done: Done[] = [];
const t0 = performance.now();
const total = (before + down + after) * 1000;
const stopAt = t0 + total;
const client = Deno.createHttpClient({});

async function worker(w: number): Promise<void> {
  let n = 0;
  while (performance.now() < stopAt) {
    const token = tokens[(w * 7919 + n++) % tokens.length];
    const start = performance.now() - t0;
    let status = 0;
    try {
      const res = await fetch(`${app.origin}/api/me`, {
        headers: { authorization: `Bearer ${token}` },
        client,
        signal: AbortSignal.timeout(30_000),
      });
      await res.body?.cancel();
      status = res.status;
    } catch {
      status = 0;
    }
    done.push({ start, end: performance.now() - t0, status });
  }
}

let downAt = NaN;
let restartAt = NaN;
let backAt = NaN;
async function chaos(): Promise<void> {
  await new Promise((r) => setTimeout(r, before * 1000));
  if (fault === "kill") {
    redis.kill("SIGKILL");
    await redis.status;
  } else {
    redis.kill("SIGSTOP");
    await new Promise((r) => setTimeout(r, 10));
  }
  // From here on Redis is certainly gone (or frozen).
  downAt = performance.now() - t0;
  console.error(`redis ${fault} at ${(downAt / 1000).toFixed(2)} s`);
  await new Promise((r) => setTimeout(r, down * 1000));
  // Until here Redis is certainly down.
  restartAt = performance.now() - t0;
  if (fault === "kill") {
    redis = startRedis();
  } else {
    redis.kill("SIGCONT");
  }
  await waitForRedis();
  backAt = performance.now() - t0;
  console.error(`redis back at ${(backAt / 1000).toFixed(2)} s`);
}

try {
  await Promise.all([
    chaos(),
    ...Array.from({ length: connections }, (_, i) => worker(i)),
  ]);
} finally {
  client.close();
  await app.stop();
  await bridge?.close();
  try {
    redis.kill("SIGCONT");
  } catch { /* not stopped */ }
  try {
    redis.kill("SIGKILL");
  } catch { /* gone */ }
  await redis.status;
}

// Sent and answered 200 while Redis was certainly down: after the fault and
// before the restart (SIGCONT or a new process). Between the restart and the
// first PING answered, Redis may already serve requests, so that window does
// not count as down.
const okWhileDown =
  done.filter((d) =>
    d.status === 200 && d.start >= downAt && d.end <= restartAt
  ).length;
const okSentWhileDown = done.filter((d) =>
  d.status === 200 && d.start >= downAt && d.start < restartAt
);
const overDeadline = done.filter((d) => d.end - d.start > deadlineMs);
const slow = done.filter((d) => d.end - d.start > deadlineMs + slackMs);
const slowest = done.reduce((m, d) => Math.max(m, d.end - d.start), 0);
const other5xx = done.filter((d) => d.status >= 500 && d.status !== 503)
  .length;
const networkErrors = done.filter((d) => d.status === 0).length;
const firstOkAfter = done
  .filter((d) => d.status === 200 && d.end >= restartAt)
  .reduce((m, d) => Math.min(m, d.end), Infinity);
const lastBadAfter = done
  .filter((d) => d.status !== 200 && d.end >= restartAt)
  .reduce((m, d) => Math.max(m, d.end), -Infinity);
const downLatencies = done.filter((d) =>
  d.start >= downAt && d.start < restartAt
)
  .map((d) => d.end - d.start).sort((a, b) => a - b);

const perSecond = new Map<number, Record<number, number>>();
for (const d of done) {
  const s = Math.floor(d.end / 1000);
  const row = perSecond.get(s) ?? {};
  row[d.status] = (row[d.status] ?? 0) + 1;
  perSecond.set(s, row);
}

const label = store === "upstash"
  ? `Upstash REST protocol (bridge), @upstash/redis retries ${upstashRetries}`
  : "RedisKV over @redis/client";
console.log(
  `\nChaos: ${label}; fault \`${fault}\` for ${down} s after ${before} s; ${connections} clients on GET /api/me. ${machineNote()}.\n`,
);
console.log(`| measure | value |`);
console.log(`| --- | --- |`);
console.log(`| requests | ${done.length} |`);
console.log(
  `| Redis down / restarted / answering PING (s from start) | ${
    (downAt / 1000).toFixed(2)
  } / ${(restartAt / 1000).toFixed(2)} / ${(backAt / 1000).toFixed(2)} |`,
);
console.log(
  `| 200s sent and answered while Redis was down (must be 0) | ${okWhileDown} |`,
);
console.log(
  `| 200s sent after the fault, answered between the restart and the first PING answered (Redis already serving again) | ${
    done.filter((d) =>
      d.status === 200 && d.start >= downAt && d.end > restartAt &&
      d.end <= backAt
    ).length
  } |`,
);
console.log(
  `| 200s sent while down, answered after it was back | ${
    okSentWhileDown.length - okWhileDown
  } |`,
);
console.log(
  `| requests answered more than ${slackMs} ms after the ${deadlineMs} ms deadline (must be 0) | ${slow.length} |`,
);
console.log(
  `| requests slower than ${deadlineMs} ms at all | ${overDeadline.length} |`,
);
console.log(`| slowest request (ms) | ${slowest.toFixed(0)} |`);
console.log(
  `| latency of requests sent while down: p50 / p99 (ms) | ${
    downLatencies.length
      ? `${downLatencies[Math.floor(downLatencies.length / 2)].toFixed(1)} / ${
        downLatencies[Math.floor(downLatencies.length * 0.99)].toFixed(1)
      }`
      : "-"
  } |`,
);
console.log(
  `| s from the restart to the first 200 / from PING answered (goal < 5) | ${
    ((firstOkAfter - restartAt) / 1000).toFixed(2)
  } / ${Math.max(0, (firstOkAfter - backAt) / 1000).toFixed(2)} |`,
);
console.log(
  `| s from the restart to the last non-200 answer | ${
    lastBadAfter === -Infinity
      ? "none"
      : ((lastBadAfter - restartAt) / 1000).toFixed(2)
  } |`,
);
console.log(`| 5xx other than 503 (must be 0) | ${other5xx} |`);
console.log(`| network errors / client timeouts | ${networkErrors} |`);
console.log(
  `\nStatuses per second (by answer time): ${
    [...perSecond.entries()].sort((a, b) => a[0] - b[0]).map(([s, row]) =>
      `${s}s ${Object.entries(row).map(([st, c]) => `${st}×${c}`).join(" ")}`
    ).join("; ")
  }`,
);
