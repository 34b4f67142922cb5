/**
 * Bench support (not part of the package): a bounded load generator run
 * (wrk, loopback only) that reports requests/s and latency percentiles, and
 * a TCP proxy on 127.0.0.1 that delays every chunk by a fixed time in each
 * direction, to stand for a store in another region.
 *
 * @module
 */

/** One wrk run's outcome. */
export interface LoadResult {
  /** Requests per second over the run. */
  rps: number;
  /** Median latency, ms. */
  p50: number;
  /** 99th percentile latency, ms. */
  p99: number;
  /** Requests completed. */
  requests: number;
}

/** Options of {@linkcode runWrk}. */
export interface WrkOptions {
  /** `http://127.0.0.1:<port><path>`. */
  url: string;
  /** Open connections (the fixed concurrency). */
  connections: number;
  /** Duration, seconds. */
  seconds: number;
  /**
   * Per-request headers, rotated request by request (one list entry per
   * request, cycling); empty for none.
   */
  headers?: readonly Record<string, string>[];
  /** Pin wrk to this core (taskset), when given. */
  core?: number;
}

const WRK = ["/usr/bin/wrk", "/usr/local/bin/wrk"].find((p) => {
  try {
    return Deno.statSync(p).isFile;
  } catch {
    return false;
  }
});

/** Whether wrk is installed (`apt-get install wrk`). */
export const hasWrk: boolean = WRK !== undefined;

function luaString(s: string): string {
  return `"${s.replace(/\\/g, "\\\\").replace(/"/g, '\\"')}"`;
}

/**
 * Runs wrk once (one thread) and parses its summary, printed by a Lua
 * `done` hook as one JSON line. Fails on any non-2xx answer.
 *
 * @param options See {@linkcode WrkOptions}.
 * @returns Throughput and latency.
 */
export async function runWrk(options: WrkOptions): Promise<LoadResult> {
  if (WRK === undefined) throw new Error("wrk is not installed");
  const u = new URL(options.url);
  const lists = options.headers ?? [];
  const script = `
local path = ${luaString(u.pathname + u.search)}
local lists = {
${
    lists.map((h) =>
      `  {${
        Object.entries(h).map(([k, v]) => `[${luaString(k)}] = ${luaString(v)}`)
          .join(", ")
      }},`
    ).join("\n")
  }
}
local i = 0
request = function()
  if #lists == 0 then return wrk.format("GET", path) end
  i = i + 1
  if i > #lists then i = 1 end
  return wrk.format("GET", path, lists[i])
end
done = function(summary, latency, requests)
  io.write(string.format('\\nRESULT {"requests":%d,"duration":%d,"status":%d,"connect":%d,"read":%d,"timeout":%d,"p50":%d,"p99":%d}\\n',
    summary.requests, summary.duration, summary.errors.status,
    summary.errors.connect, summary.errors.read, summary.errors.timeout,
    latency:percentile(50), latency:percentile(99)))
end
`;
  const file = await Deno.makeTempFile({ suffix: ".lua" });
  try {
    await Deno.writeTextFile(file, script);
    const args = [
      "-t",
      "1",
      "-c",
      String(options.connections),
      "-d",
      `${options.seconds}s`,
      "-s",
      file,
      options.url,
    ];
    const cmd = options.core !== undefined
      ? new Deno.Command("taskset", {
        args: ["-c", String(options.core), WRK, ...args],
        stderr: "piped",
      })
      : new Deno.Command(WRK, { args, stderr: "piped" });
    const out = await cmd.output();
    const text = new TextDecoder().decode(out.stdout);
    const line = text.split("\n").find((l) => l.startsWith("RESULT "));
    if (line === undefined) {
      throw new Error(
        `wrk printed no result: ${text} ${
          new TextDecoder().decode(out.stderr)
        }`,
      );
    }
    const r = JSON.parse(line.slice(7));
    if (r.status > 0) throw new Error(`${options.url}: ${r.status} non-2xx`);
    return {
      rps: r.requests / (r.duration / 1e6),
      p50: r.p50 / 1000,
      p99: r.p99 / 1000,
      requests: r.requests,
    };
  } finally {
    await Deno.remove(file).catch(() => {});
  }
}

/** A running delaying proxy; see {@linkcode startDelayProxy}. */
export interface DelayProxy {
  /** The port it listens on (127.0.0.1). */
  readonly port: number;
  /** Stops listening and closes every connection. */
  close(): void;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * Starts a TCP proxy on 127.0.0.1 in front of `127.0.0.1:<targetPort>` that
 * forwards every chunk `delayMs` after it arrived, in each direction, keeping
 * order and without serialising chunks (pipelined requests overlap, as on a
 * real link with that one-way latency).
 *
 * @param targetPort The upstream port on 127.0.0.1.
 * @param delayMs The one-way delay.
 * @returns The proxy.
 */
export function startDelayProxy(
  targetPort: number,
  delayMs: number,
): DelayProxy {
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const conns = new Set<Deno.Conn>();
  const pipe = async (src: Deno.TcpConn, dst: Deno.TcpConn) => {
    let chain: Promise<void> = Promise.resolve();
    const buf = new Uint8Array(64 * 1024);
    try {
      for (;;) {
        const n = await src.read(buf);
        if (n === null) break;
        const chunk = buf.slice(0, n);
        const due = performance.now() + delayMs;
        chain = chain.then(async () => {
          const wait = due - performance.now();
          if (wait > 0) await sleep(wait);
          let at = 0;
          while (at < chunk.length) at += await dst.write(chunk.subarray(at));
        });
      }
    } catch {
      // a side closed
    }
    await chain.catch(() => {});
    await dst.closeWrite().catch(() => {});
  };
  (async () => {
    for await (const client of listener) {
      (async () => {
        let upstream: Deno.TcpConn;
        try {
          upstream = await Deno.connect({
            hostname: "127.0.0.1",
            port: targetPort,
          });
        } catch {
          client.close();
          return;
        }
        client.setNoDelay(true);
        upstream.setNoDelay(true);
        conns.add(client);
        conns.add(upstream);
        await Promise.all([pipe(client, upstream), pipe(upstream, client)]);
        for (const c of [client, upstream]) {
          conns.delete(c);
          try {
            c.close();
          } catch {
            // already closed
          }
        }
      })();
    }
  })().catch(() => {});
  return {
    port: (listener.addr as Deno.NetAddr).port,
    close() {
      listener.close();
      for (const c of conns) {
        try {
          c.close();
        } catch {
          // already closed
        }
      }
    },
  };
}

/** The best (highest) of several samples. */
export const best = (xs: readonly number[]): number => Math.max(...xs);
/** The lowest of several samples (for latencies). */
export const least = (xs: readonly number[]): number => Math.min(...xs);
/** The median of several samples. */
export const median = (xs: readonly number[]): number =>
  [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

/**
 * CPU time a process has used so far, in nanoseconds, over all its threads,
 * those that ended included (`utime + stime` of `/proc/<pid>/stat`, in clock
 * ticks of 10 ms: runs of a few seconds keep the error under 1 %). On a
 * shared machine the CPU time a server spends per request stays close to its
 * cost when idle, while its requests per second depend on what else runs.
 *
 * @param pid The process id.
 * @returns Nanoseconds on CPU.
 */
export function cpuNs(pid: number): number {
  const stat = Deno.readTextFileSync(`/proc/${pid}/stat`);
  // Fields after the command name (which may hold spaces) in parentheses.
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  const ticks = Number(fields[11]) + Number(fields[12]); // utime, stime
  return ticks * 1e7; // USER_HZ is 100 on Linux
}

/** A wrk run with the server's CPU time per request. */
export interface MeteredResult extends LoadResult {
  /** Server CPU microseconds per request (all its threads). */
  cpuUs: number;
}

/**
 * {@linkcode runWrk}, metering the server process's CPU time.
 *
 * @param pid The server's process id.
 * @param options See {@linkcode WrkOptions}.
 * @returns Throughput, latency and CPU per request.
 */
export async function runMetered(
  pid: number,
  options: WrkOptions,
): Promise<MeteredResult> {
  const before = cpuNs(pid);
  const res = await runWrk(options);
  const used = cpuNs(pid) - before;
  return { ...res, cpuUs: used / 1000 / res.requests };
}
