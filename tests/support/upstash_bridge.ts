/**
 * Test support, not part of the package: an HTTP server that speaks the
 * Upstash Redis REST protocol in front of a real Redis server, so that
 * `@upstash/redis` and `UpstashKV` run against real Redis in tests and
 * benches without an Upstash account.
 *
 * What it speaks (the part of the protocol `@upstash/redis` uses):
 *
 * - `POST /` with a JSON array body `["SET", "k", "v", "EX", 60]`: one
 *   command; `200 {"result": …}`, or `400 {"error": "ERR …"}` when Redis
 *   answers with an error.
 * - `POST /pipeline` with an array of commands: `200 [{"result": …} |
 *   {"error": …}, …]`, one entry per command, not atomic.
 * - `POST /multi-exec` with an array of commands: the same answer, run
 *   between `MULTI` and `EXEC`; `400 {"error": …}` when Redis discards the
 *   transaction.
 * - `Authorization: Bearer <token>` (or a `_token` query parameter); a
 *   missing or wrong token answers `401 {"error": "Unauthorized"}`.
 * - `Upstash-Encoding: base64`, which the client sends by default: every
 *   string in a result (bulk and simple strings, also inside arrays) is the
 *   base64 of its bytes, except the simple string `OK`; integers stay
 *   numbers, nil stays `null`, errors stay plain text.
 * - Redis unreachable: `502 {"error": "ERR …"}`.
 *
 * It counts HTTP requests and Redis commands (see {@linkcode BridgeStats}),
 * which is how tests and benches measure round trips per request.
 *
 * @module
 */

/** A Redis reply as parsed from RESP2. */
type Reply =
  | { kind: "simple"; value: string }
  | { kind: "error"; value: string }
  | { kind: "integer"; value: number }
  | { kind: "bulk"; value: Uint8Array | null }
  | { kind: "array"; value: Reply[] | null };

const CRLF = new Uint8Array([13, 10]);
const encoder = new TextEncoder();
const decoder = new TextDecoder();

/** Encodes one command as a RESP array of bulk strings. */
function encodeCommand(args: readonly string[]): Uint8Array {
  const parts: Uint8Array[] = [encoder.encode(`*${args.length}\r\n`)];
  for (const arg of args) {
    const bytes = encoder.encode(arg);
    parts.push(encoder.encode(`$${bytes.length}\r\n`), bytes, CRLF);
  }
  return concat(parts);
}

function concat(parts: readonly Uint8Array[]): Uint8Array<ArrayBuffer> {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}

/** A tiny RESP2 client over one TCP connection, one caller at a time. */
class RespConnection {
  #conn: Deno.TcpConn;
  #buf: Uint8Array<ArrayBuffer> = new Uint8Array(0);
  #at = 0;
  broken = false;

  constructor(conn: Deno.TcpConn) {
    this.#conn = conn;
  }

  /** Writes all commands at once, then reads one reply per command. */
  async send(commands: readonly (readonly string[])[]): Promise<Reply[]> {
    try {
      const bytes = concat(commands.map(encodeCommand));
      let written = 0;
      while (written < bytes.length) {
        written += await this.#conn.write(bytes.subarray(written));
      }
      const replies: Reply[] = [];
      for (let i = 0; i < commands.length; i++) {
        replies.push(await this.#readReply());
      }
      return replies;
    } catch (err) {
      this.broken = true;
      throw err;
    }
  }

  close(): void {
    try {
      this.#conn.close();
    } catch {
      // Already closed.
    }
  }

  async #fill(): Promise<void> {
    const chunk = new Uint8Array(64 * 1024);
    const n = await this.#conn.read(chunk);
    if (n === null) throw new Error("Redis closed the connection");
    const rest = this.#buf.subarray(this.#at);
    this.#buf = concat([rest, chunk.subarray(0, n)]);
    this.#at = 0;
  }

  async #readLine(): Promise<string> {
    while (true) {
      for (let i = this.#at; i + 1 < this.#buf.length; i++) {
        if (this.#buf[i] === 13 && this.#buf[i + 1] === 10) {
          const line = decoder.decode(this.#buf.subarray(this.#at, i));
          this.#at = i + 2;
          return line;
        }
      }
      await this.#fill();
    }
  }

  async #readBytes(n: number): Promise<Uint8Array> {
    while (this.#buf.length - this.#at < n + 2) await this.#fill();
    const bytes = this.#buf.slice(this.#at, this.#at + n);
    this.#at += n + 2; // the value, then CRLF
    return bytes;
  }

  async #readReply(): Promise<Reply> {
    const line = await this.#readLine();
    const rest = line.slice(1);
    switch (line[0]) {
      case "+":
        return { kind: "simple", value: rest };
      case "-":
        return { kind: "error", value: rest };
      case ":":
        return { kind: "integer", value: Number(rest) };
      case "$": {
        const n = Number(rest);
        return { kind: "bulk", value: n < 0 ? null : await this.#readBytes(n) };
      }
      case "*": {
        const n = Number(rest);
        if (n < 0) return { kind: "array", value: null };
        const items: Reply[] = [];
        for (let i = 0; i < n; i++) items.push(await this.#readReply());
        return { kind: "array", value: items };
      }
      default:
        throw new Error(`Unexpected RESP reply: ${JSON.stringify(line)}`);
    }
  }
}

function base64(bytes: Uint8Array): string {
  let bin = "";
  for (let i = 0; i < bytes.length; i++) bin += String.fromCharCode(bytes[i]);
  return btoa(bin);
}

/** Converts a reply to the JSON value Upstash puts in `result`. */
function toJson(reply: Reply, b64: boolean): unknown {
  switch (reply.kind) {
    case "simple":
      return b64 && reply.value !== "OK"
        ? base64(encoder.encode(reply.value))
        : reply.value;
    case "integer":
      return reply.value;
    case "bulk":
      if (reply.value === null) return null;
      return b64 ? base64(reply.value) : decoder.decode(reply.value);
    case "array":
      return reply.value === null
        ? null
        : reply.value.map((r) => toJson(r, b64));
    case "error":
      // Only reachable inside arrays (for example EVAL results).
      return reply.value;
  }
}

/** `{ result }` or `{ error }` for one reply. */
function toEntry(reply: Reply, b64: boolean): Record<string, unknown> {
  return reply.kind === "error"
    ? { error: reply.value }
    : { result: toJson(reply, b64) };
}

/** What the bridge counted since it started or since `resetStats()`. */
export interface BridgeStats {
  /** HTTP requests received, including rejected ones. */
  httpRequests: number;
  /** Redis commands sent on behalf of clients (not counting MULTI/EXEC). */
  commands: number;
  /** Commands by upper-case name, such as `{ MGET: 3, SET: 2 }`. */
  byName: Record<string, number>;
}

/** Options of {@linkcode startUpstashBridge}. */
export interface UpstashBridgeOptions {
  /** The bearer token clients must send; random when not given. */
  token?: string;
  /** Redis host; `127.0.0.1` by default. */
  redisHostname?: string;
  /** Redis port; 6379 by default. */
  redisPort?: number;
}

/** A running bridge; see {@linkcode startUpstashBridge}. */
export interface UpstashBridge {
  /** The REST URL to give `@upstash/redis`, such as `http://127.0.0.1:41234`. */
  readonly url: string;
  /** The token the bridge accepts. */
  readonly token: string;
  /** A snapshot of the counters. */
  stats(): BridgeStats;
  /** Sets every counter back to zero. */
  resetStats(): void;
  /** Stops the HTTP server and closes the Redis connections. */
  close(): Promise<void>;
}

type Command = string[];

function parseCommand(value: unknown): Command | null {
  if (!Array.isArray(value) || value.length === 0) return null;
  const out: string[] = [];
  for (const arg of value) {
    if (typeof arg === "string") out.push(arg);
    else if (typeof arg === "number" || typeof arg === "boolean") {
      out.push(String(arg));
    } else return null;
  }
  return out;
}

function json(body: unknown, status = 200): Response {
  return new Response(JSON.stringify(body), {
    status,
    headers: { "content-type": "application/json" },
  });
}

/**
 * Starts an Upstash-REST-compatible bridge on 127.0.0.1 (a random port) in
 * front of a real Redis server. Test support only: it has no TLS, no limits
 * and no read-only tokens.
 *
 * @param options See {@linkcode UpstashBridgeOptions}.
 * @returns The running bridge.
 *
 * @example Usage
 * ```ts ignore
 * import { Redis } from "@upstash/redis";
 * const bridge = startUpstashBridge();
 * const redis = new Redis({ url: bridge.url, token: bridge.token });
 * await redis.set("k", "v");
 * console.log(bridge.stats().httpRequests); // 1
 * await bridge.close();
 * ```
 */
export function startUpstashBridge(
  options: UpstashBridgeOptions = {},
): UpstashBridge {
  const token = options.token ?? crypto.randomUUID();
  const redisHostname = options.redisHostname ?? "127.0.0.1";
  const redisPort = options.redisPort ?? 6379;
  const idle: RespConnection[] = [];
  let stats: BridgeStats = { httpRequests: 0, commands: 0, byName: {} };

  async function withConnection<T>(
    fn: (c: RespConnection) => Promise<T>,
  ): Promise<T> {
    const conn = idle.pop() ??
      new RespConnection(
        await Deno.connect({ hostname: redisHostname, port: redisPort }),
      );
    try {
      return await fn(conn);
    } finally {
      if (conn.broken) conn.close();
      else idle.push(conn);
    }
  }

  function count(commands: readonly Command[]): void {
    for (const c of commands) {
      stats.commands++;
      const name = c[0].toUpperCase();
      stats.byName[name] = (stats.byName[name] ?? 0) + 1;
    }
  }

  async function handle(req: Request): Promise<Response> {
    stats.httpRequests++;
    const url = new URL(req.url);
    const auth = req.headers.get("authorization");
    const given = auth?.startsWith("Bearer ")
      ? auth.slice(7)
      : url.searchParams.get("_token");
    if (given !== token) return json({ error: "Unauthorized" }, 401);
    if (req.method !== "POST") {
      return json({ error: "Method not allowed" }, 405);
    }
    const b64 = req.headers.get("upstash-encoding")?.toLowerCase() ===
      "base64";
    let body: unknown;
    try {
      body = await req.json();
    } catch {
      return json({ error: "ERR the request body is not JSON" }, 400);
    }
    const path = url.pathname.replace(/\/+$/, "");
    try {
      if (path === "") {
        const command = parseCommand(body);
        if (!command) {
          return json({ error: "ERR the body must be a command array" }, 400);
        }
        count([command]);
        const [reply] = await withConnection((c) => c.send([command]));
        return reply.kind === "error"
          ? json({ error: reply.value }, 400)
          : json({ result: toJson(reply, b64) });
      }
      if (path === "/pipeline" || path === "/multi-exec") {
        const commands = Array.isArray(body) ? body.map(parseCommand) : [];
        if (commands.length === 0 || commands.some((c) => c === null)) {
          return json({
            error: "ERR the body must be an array of command arrays",
          }, 400);
        }
        const list = commands as Command[];
        count(list);
        if (path === "/pipeline") {
          const replies = await withConnection((c) => c.send(list));
          return json(replies.map((r) => toEntry(r, b64)));
        }
        const replies = await withConnection((c) =>
          c.send([["MULTI"], ...list, ["EXEC"]])
        );
        const exec = replies[replies.length - 1];
        if (exec.kind === "error") return json({ error: exec.value }, 400);
        if (exec.kind !== "array" || exec.value === null) {
          return json({ error: "ERR the transaction was aborted" }, 400);
        }
        return json(exec.value.map((r) => toEntry(r, b64)));
      }
      return json({ error: `ERR unknown endpoint ${url.pathname}` }, 404);
    } catch (err) {
      const why = err instanceof Error ? err.message : String(err);
      return json(
        { error: `ERR the bridge could not reach Redis: ${why}` },
        502,
      );
    }
  }

  const server = Deno.serve({
    hostname: "127.0.0.1",
    port: 0,
    onListen: () => {},
  }, handle);
  const addr = server.addr as Deno.NetAddr;
  return {
    url: `http://127.0.0.1:${addr.port}`,
    token,
    stats: () => ({ ...stats, byName: { ...stats.byName } }),
    resetStats: () => {
      stats = { httpRequests: 0, commands: 0, byName: {} };
    },
    close: async () => {
      await server.shutdown();
      for (const c of idle.splice(0)) c.close();
    },
  };
}

/**
 * Finds a TCP port on 127.0.0.1 that nothing listens on (it was free a
 * moment ago), for tests that need a backend to be down.
 *
 * @returns The port.
 */
export function closedPort(): number {
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const port = (listener.addr as Deno.NetAddr).port;
  listener.close();
  return port;
}
