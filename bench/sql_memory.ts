/**
 * RSS of the reference app over time under a bounded `/api/me` load, one
 * run per user store, to see whether the server's native memory grows with
 * the number of SQL user lookups (issue 9, item 12).
 *
 * ```sh
 * deno run -A bench/sql_memory.ts                       # every backend, 120 s each
 * deno run -A bench/sql_memory.ts --backends libsql-file,sqlite-file --seconds 180
 * ```
 *
 * Each run starts `bench/_app_server.ts` with the chosen user store and an
 * in-memory key-value store (so the user lookup is the only store that
 * changes), warms it for 10 s, then sends `GET /api/me` with the warm
 * Bearer tokens of 200 users with `wrk` (apt; one thread, `--connections`
 * (16) connections, 127.0.0.1) for `--seconds`, and reads the server's RSS
 * every `--sample` (10) seconds, then 15 s more with no load. wrk reports
 * only a total, so requests per sample are prorated by time. It prints a Markdown table: RSS at the start
 * and end of the load, MiB per 100,000 requests over the whole run and over
 * its second half (a plateau shows as a second-half figure near 0), and the
 * curve.
 *
 * Backends: `memory` (no SQL: the baseline), `libsql-file`,
 * `libsql-memory` (`@libsql/client`), `sqlite-file`, `sqlite-memory`
 * (`packages/accounts/deno/_node_sqlite.ts`), `pglite`, `postgres`, `mariadb`.
 *
 * @module
 */
import { flags, machineNote, startApp } from "./_app_load.ts";
import type { ServerConfig } from "./_app_server.ts";

const args = flags(Deno.args);
const seconds = Number(args.seconds ?? 120);
const sampleSeconds = Number(args.sample ?? 10);
const connections = Number(args.connections ?? 16);
const backends = (args.backends ??
  "memory,libsql-file,libsql-memory,sqlite-file,sqlite-memory,pglite,postgres,mariadb")
  .split(",") as ServerConfig["users"][];

/** RSS as /proc reads it, then RSS and JS heap after a forced full GC. */
interface Sample {
  t: number;
  rss: number;
  gcRss: number;
  heap: number;
  requests: number;
}

async function sample(
  app: Awaited<ReturnType<typeof startApp>>,
  t: number,
): Promise<Sample> {
  const rss = app.rssMiB();
  const m = await app.memoryAfterGC();
  return { t, rss, gcRss: m.rss, heap: m.heapUsed, requests: NaN };
}

interface Result {
  backend: string;
  requests: number;
  non200: number;
  samples: Sample[];
  idle: number;
}

/** A wrk Lua script that sends GET /api/me with the tokens in turn. */
function wrkScript(tokens: string[]): string {
  return `local tokens = {${tokens.map((t) => JSON.stringify(t)).join(",")}}
local i = 0
request = function()
  i = i + 1
  return wrk.format("GET", "/api/me", { ["Authorization"] = "Bearer " .. tokens[(i % #tokens) + 1] })
end
`;
}

/** Runs wrk for `seconds`; answers its request count and non-2xx count. */
async function wrk(
  origin: string,
  script: string,
  seconds: number,
): Promise<{ requests: number; non2xx: number }> {
  const out = await new Deno.Command("wrk", {
    args: [
      "-t1",
      `-c${connections}`,
      `-d${seconds}s`,
      "-s",
      script,
      origin,
    ],
    stdout: "piped",
    stderr: "piped",
  }).output();
  const text = new TextDecoder().decode(out.stdout);
  const requests = Number(/(\d+) requests in/.exec(text)?.[1] ?? NaN);
  const non2xx = Number(/Non-2xx or 3xx responses: (\d+)/.exec(text)?.[1] ?? 0);
  return { requests, non2xx };
}

async function measure(backend: ServerConfig["users"]): Promise<Result> {
  const app = await startApp({ users: backend, kv: "memory" });
  const tokens = app.ready.tokens;
  const script = await Deno.makeTempFile({ suffix: ".lua" });
  await Deno.writeTextFile(script, wrkScript(tokens));
  try {
    await wrk(app.origin, script, 10);
    const samples: Sample[] = [await sample(app, 0)];
    const t0 = performance.now();
    const pending: Promise<void>[] = [];
    const sampler = setInterval(() => {
      const t = Math.round((performance.now() - t0) / 1000);
      pending.push(sample(app, t).then((s) => void samples.push(s)));
    }, sampleSeconds * 1000);
    const { requests, non2xx } = await wrk(app.origin, script, seconds);
    clearInterval(sampler);
    await Promise.all(pending);
    samples.push(await sample(app, seconds));
    samples.sort((a, b) => a.t - b.t);
    // wrk reports only a total: requests at each sample by elapsed time.
    for (const s of samples) s.requests = (requests * s.t) / seconds;
    await new Promise((r) => setTimeout(r, 15_000));
    const idle = (await app.memoryAfterGC()).rss;
    return { backend, requests, non200: non2xx, samples, idle };
  } finally {
    await Deno.remove(script);
    await app.stop();
  }
}

function perHundredK(a: Sample, b: Sample): number {
  const dr = b.requests - a.requests;
  return dr > 0 ? ((b.gcRss - a.gcRss) / dr) * 100_000 : NaN;
}

const results: Result[] = [];
for (const backend of backends) {
  console.error(`measuring ${backend} for ${seconds} s…`);
  const r = await measure(backend);
  results.push(r);
  console.error(
    `  ${r.requests} requests, RSS after GC ${
      r.samples[0].gcRss.toFixed(1)
    } → ${r.samples.at(-1)!.gcRss.toFixed(1)} MiB`,
  );
}

console.log(
  `\nwrk, ${connections} connections, ${seconds} s of GET /api/me per backend after 10 s of warm-up; every ${sampleSeconds} s the server runs a full GC and reports its RSS. ${machineNote()}.\n`,
);
console.log(
  "| users store | requests | non-2xx | RSS after GC, start → end of load (MiB) | JS heap after GC, start → end | RSS after GC, 15 s idle | MiB per 100k requests, whole run | second half |",
);
console.log("| --- | --- | --- | --- | --- | --- | --- | --- |");
for (const r of results) {
  const first = r.samples[0];
  const last = r.samples.at(-1)!;
  const mid = r.samples[Math.floor((r.samples.length - 1) / 2)];
  console.log(
    `| ${r.backend} | ${r.requests} | ${r.non200} | ${
      first.gcRss.toFixed(1)
    } → ${last.gcRss.toFixed(1)} | ${first.heap.toFixed(1)} → ${
      last.heap.toFixed(1)
    } | ${r.idle.toFixed(1)} | ${perHundredK(first, last).toFixed(2)} | ${
      perHundredK(mid, last).toFixed(2)
    } |`,
  );
}
console.log("\nCurves (seconds: RSS after GC, MiB):\n");
for (const r of results) {
  console.log(
    `- ${r.backend}: ${
      r.samples.map((s) => `${s.t}: ${s.gcRss.toFixed(0)}`).join(", ")
    }`,
  );
}
