/**
 * Bench support: starts `bench/_app_server.ts` as a child process, reads
 * its RSS, and drives a bounded closed-loop load (a fixed number of
 * concurrent clients, for a fixed time, 127.0.0.1 only) while recording
 * status codes and latencies per time window.
 *
 * @module
 */
import type { ServerConfig, ServerReady } from "./_app_server.ts";

/** A running app server. */
export interface AppProcess {
  readonly ready: ServerReady;
  readonly origin: string;
  readonly pid: number;
  /** The server's resident set size, in MiB (from /proc). */
  rssMiB(): number;
  /**
   * RSS and heap after a full garbage collection in the server (MiB),
   * read through the bench server's `/__bench/memory`.
   */
  memoryAfterGC(): Promise<
    { rss: number; heapUsed: number; heapTotal: number; external: number }
  >;
  /** SIGTERM, then waits for the exit. */
  stop(): Promise<void>;
}

/** A free TCP port on 127.0.0.1. */
export function freePort(): number {
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const port = (listener.addr as Deno.NetAddr).port;
  listener.close();
  return port;
}

/** Resident set size of a process, in MiB. */
export function rssOf(pid: number): number {
  const status = Deno.readTextFileSync(`/proc/${pid}/status`);
  const kb = Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? NaN);
  return kb / 1024;
}

/** Starts the app server and waits for its ready line. */
export async function startApp(
  config: Omit<ServerConfig, "port" | "dataDir"> & { dataDir?: string },
): Promise<AppProcess> {
  const port = freePort();
  const dataDir = config.dataDir ?? await Deno.makeTempDir({ prefix: "soak" });
  const full: ServerConfig = { ...config, port, dataDir };
  const child = new Deno.Command(Deno.execPath(), {
    args: [
      "run",
      "-A",
      `--v8-flags=--expose-gc${
        Deno.env.get("APP_V8_FLAGS") ? "," + Deno.env.get("APP_V8_FLAGS") : ""
      }`,
      `--import-map=${new URL("./import_map.json", import.meta.url).pathname}`,
      `--lock=${new URL("./deno.lock", import.meta.url).pathname}`,
      new URL("./_app_server.ts", import.meta.url).pathname,
      JSON.stringify(full),
    ],
    stdout: "piped",
    stderr: "inherit",
  }).spawn();
  const reader = child.stdout.pipeThrough(new TextDecoderStream()).getReader();
  let buffered = "";
  let ready: ServerReady | undefined;
  while (ready === undefined) {
    const { value, done } = await reader.read();
    if (done) throw new Error(`app server exited before it was ready`);
    buffered += value;
    const line = buffered.split("\n").find((l) => l.startsWith('{"ready"'));
    if (line) ready = JSON.parse(line) as ServerReady;
  }
  // Keep draining stdout so the child never blocks on a full pipe.
  (async () => {
    try {
      while (!(await reader.read()).done) { /* discard */ }
    } catch { /* closed */ }
  })();
  return {
    ready,
    origin: `http://127.0.0.1:${port}`,
    pid: child.pid,
    rssMiB: () => rssOf(child.pid),
    async memoryAfterGC() {
      const res = await fetch(`http://127.0.0.1:${port}/__bench/memory`);
      const m = await res.json() as Record<string, number>;
      const mib = (n: number) => n / 1048576;
      return {
        rss: mib(m.rss),
        heapUsed: mib(m.heapUsed),
        heapTotal: mib(m.heapTotal),
        external: mib(m.external),
      };
    },
    async stop() {
      try {
        child.kill("SIGTERM");
      } catch { /* already gone */ }
      const timer = setTimeout(() => {
        try {
          child.kill("SIGKILL");
        } catch { /* gone */ }
      }, 10_000);
      await child.status;
      clearTimeout(timer);
      if (config.dataDir === undefined) {
        await Deno.remove(dataDir, { recursive: true }).catch(() => {});
      }
    },
  };
}

/** One request the load sends: built fresh each time. */
export type RequestMaker = (worker: number, n: number) => {
  kind: string;
  request: Request;
  /** Called with the response (body already read as text). */
  after?: (res: Response, body: string) => void;
};

/** What one time window saw. */
export interface Window {
  /** Seconds since the start at which the window began. */
  start: number;
  count: number;
  /** Count per status code; 0 for a network error. */
  statuses: Record<number, number>;
  /** Count per request kind. */
  kinds: Record<string, number>;
  /** Latencies in ms of every answered request. */
  latencies: number[];
  /** Requests that took longer than `slowMs`. */
  slow: number;
  /** The longest latency, ms. */
  max: number;
}

/** Options of {@linkcode runLoad}. */
export interface LoadOptions {
  /** Concurrent clients. */
  connections: number;
  /** Seconds of load. */
  seconds: number;
  /** Seconds per window. */
  windowSeconds: number;
  /** A latency above this counts as slow (ms). */
  slowMs?: number;
  /** Called at each window's end. */
  onWindow?: (w: Window, index: number) => void;
  /** Per-request timeout (ms); a timed-out request counts as status 0. */
  timeoutMs?: number;
}

/** Drives the load; answers the windows. */
export async function runLoad(
  make: RequestMaker,
  options: LoadOptions,
): Promise<Window[]> {
  const t0 = performance.now();
  const end = t0 + options.seconds * 1000;
  const windows: Window[] = [];
  const slowMs = options.slowMs ?? Infinity;
  const windowOf = (at: number): Window => {
    const i = Math.floor((at - t0) / (options.windowSeconds * 1000));
    while (windows.length <= i) {
      const w: Window = {
        start: windows.length * options.windowSeconds,
        count: 0,
        statuses: {},
        kinds: {},
        latencies: [],
        slow: 0,
        max: 0,
      };
      if (windows.length > 0) {
        options.onWindow?.(windows[windows.length - 1], windows.length - 1);
      }
      windows.push(w);
    }
    return windows[i];
  };
  windowOf(t0);
  const client = Deno.createHttpClient({});
  async function worker(id: number): Promise<void> {
    let n = 0;
    while (performance.now() < end) {
      const { kind, request, after } = make(id, n++);
      const started = performance.now();
      let status = 0;
      try {
        const res = await fetch(request, {
          client,
          signal: AbortSignal.timeout(options.timeoutMs ?? 30_000),
        });
        const body = await res.text();
        status = res.status;
        after?.(res, body);
      } catch {
        status = 0;
      }
      const done = performance.now();
      // A request belongs to the window in which it was sent.
      const w = windowOf(started);
      const ms = done - started;
      w.count++;
      w.statuses[status] = (w.statuses[status] ?? 0) + 1;
      w.kinds[kind] = (w.kinds[kind] ?? 0) + 1;
      w.latencies.push(ms);
      if (ms > slowMs) w.slow++;
      if (ms > w.max) w.max = ms;
    }
  }
  await Promise.all(
    Array.from({ length: options.connections }, (_, i) => worker(i)),
  );
  options.onWindow?.(windows[windows.length - 1], windows.length - 1);
  client.close();
  return windows;
}

/** The p-th percentile (0–100) of a list of numbers. */
export function percentile(values: number[], p: number): number {
  if (values.length === 0) return NaN;
  const sorted = Float64Array.from(values).sort();
  const i = Math.min(
    sorted.length - 1,
    Math.max(0, Math.ceil((p / 100) * sorted.length) - 1),
  );
  return sorted[i];
}

/** Parses `--name value` and `--name=value` flags. */
export function flags(args: string[]): Record<string, string> {
  const out: Record<string, string> = {};
  for (let i = 0; i < args.length; i++) {
    const a = args[i];
    if (!a.startsWith("--")) continue;
    const eq = a.indexOf("=");
    if (eq > 0) out[a.slice(2, eq)] = a.slice(eq + 1);
    else if (i + 1 < args.length && !args[i + 1].startsWith("--")) {
      out[a.slice(2)] = args[++i];
    } else out[a.slice(2)] = "true";
  }
  return out;
}

/** Load average and core count, for the report's "machine shared" note. */
export function machineNote(): string {
  const load = Deno.loadavg().map((x) => x.toFixed(2)).join(" ");
  return `${navigator.hardwareConcurrency} cores shared with other agents; load average at the end ${load}; Deno ${Deno.version.deno}`;
}
