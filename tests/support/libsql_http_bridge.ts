/**
 * Test support, not part of the package: an HTTP server that speaks the
 * libSQL remote protocol (Hrana over HTTP, JSON) in front of a real local
 * libSQL database file, so that `@libsql/client/web` (and drizzle's
 * `drizzle-orm/libsql/web`) run against real SQLite in tests and in the
 * Vercel Edge conformance run without a Turso account or an `sqld` server
 * (which is not on npm).
 *
 * What it speaks (the part `@libsql/client` 0.18.0 / `@libsql/hrana-client`
 * 0.10.0 use over HTTP; the client speaks Hrana 2 over JSON unless told
 * otherwise):
 *
 * - `GET /v2` and `GET /v3`: `200`, the version probes. `/v3-protobuf` is
 *   not served, so a client that probes for it falls back to JSON.
 * - `POST /v2/pipeline` (and `/v3/pipeline`, the same JSON):
 *   `{ baton, requests: [...] }` → `{ baton, base_url: null, results: [...] }`,
 *   one result per request, `{ type: "ok", response }` or
 *   `{ type: "error", error: { message, code } }`. Requests:
 *   - `execute` (`stmt: { sql | sql_id, args, named_args, want_rows }`) →
 *     `{ cols: [{ name, decltype }], rows, affected_row_count,
 *     last_insert_rowid }`;
 *   - `batch` (`batch: { steps: [{ condition?, stmt }] }`) with step
 *     conditions `ok`, `error`, `not`, `and`, `or`, `is_autocommit` →
 *     `{ step_results, step_errors }` (`null` for a step that did not run
 *     or did not fail);
 *   - `sequence` (`sql | sql_id`: several statements, no results);
 *   - `store_sql` / `close_sql` (the client's SQL cache, per stream);
 *   - `get_autocommit`; `close`.
 *   Anything else (`describe`, cursors) answers a Hrana error.
 * - Values: `{ type: "null" | "integer" | "float" | "text" | "blob" }` with
 *   `value` (integers as decimal strings) or `base64`.
 * - Streams: a request without a baton opens a stream; the answer carries
 *   its baton until a `close` request (then `null`). A stream idle for
 *   `streamIdleMs` is closed and its transaction rolled back; an unknown
 *   baton answers `400 { message, code: "STREAM_EXPIRED" }`.
 * - `Authorization: Bearer <token>` on every POST; a missing or wrong token
 *   answers `401 { message, code: "UNAUTHORIZED" }`.
 *
 * How it runs statements: each stream has its own `@libsql/client`
 * (`file:` URL, one connection), so a transaction begun by one request is
 * still open at the stream's next request. `BEGIN …`, `COMMIT`/`END` and
 * `ROLLBACK` are carried out with the local client's `transaction()`,
 * `commit()` and `rollback()` (its pool would roll back a bare `BEGIN` when
 * the connection is returned). Statements are serialised: a stream takes
 * the database lock for its request and keeps it while its transaction is
 * open (the native driver is synchronous, so a second writer could only
 * fail with `SQLITE_BUSY` or block the event loop); a request that waits
 * longer than `lockWaitMs` fails with `SQLITE_BUSY`. Driver errors keep
 * their code (`SQLITE_CONSTRAINT_UNIQUE`, …) and message.
 *
 * @module
 */
import {
  type Client,
  createClient,
  type InValue,
  LibsqlError,
  type ResultSet,
  type Transaction,
  type TransactionMode,
} from "@libsql/client";

/** A Hrana value on the wire. */
type WireValue =
  | { type: "null" }
  | { type: "integer"; value: string }
  | { type: "float"; value: number }
  | { type: "text"; value: string }
  | { type: "blob"; base64: string };

interface WireStmt {
  sql?: string;
  sql_id?: number;
  args?: WireValue[];
  named_args?: { name: string; value: WireValue }[];
  want_rows?: boolean;
}

type WireCond =
  | { type: "ok" | "error"; step: number }
  | { type: "not"; cond: WireCond }
  | { type: "and" | "or"; conds: WireCond[] }
  | { type: "is_autocommit" };

interface WireRequest {
  type: string;
  stmt?: WireStmt;
  batch?: { steps: { condition?: WireCond | null; stmt: WireStmt }[] };
  sql?: string;
  sql_id?: number;
}

interface WireError {
  message: string;
  code: string;
}

interface WireStmtResult {
  cols: { name: string; decltype: string | null }[];
  rows: WireValue[][];
  affected_row_count: number;
  last_insert_rowid: string | null;
}

/** A Hrana error raised by the bridge itself. */
class HranaError extends Error {
  constructor(message: string, readonly code: string) {
    super(message);
  }
}

/** What the bridge counted since it started. */
export interface LibsqlBridgeStats {
  /** HTTP requests received, including rejected ones. */
  httpRequests: number;
  /** SQL statements run on behalf of clients (batch steps included). */
  statements: number;
  /** Streams opened. */
  streams: number;
}

/** Options of {@linkcode startLibsqlHttpBridge}. */
export interface LibsqlHttpBridgeOptions {
  /** The bearer token clients must send; random when not given. */
  token?: string;
  /**
   * The database file; a new file in a temporary directory (removed by
   * `close()`) when not given.
   */
  path?: string;
  /** How long a stream may stay idle before it is closed; 10 s by default. */
  streamIdleMs?: number;
  /** How long a request waits for the database lock; 5 s by default. */
  lockWaitMs?: number;
}

/** A running bridge; see {@linkcode startLibsqlHttpBridge}. */
export interface LibsqlHttpBridge {
  /** The URL to give `@libsql/client/web`, such as `http://127.0.0.1:41234`. */
  readonly url: string;
  /** The token the bridge accepts. */
  readonly token: string;
  /** The database file behind it. */
  readonly path: string;
  /** A snapshot of the counters. */
  stats(): LibsqlBridgeStats;
  /** Rolls back open transactions, stops the server, closes the database. */
  close(): Promise<void>;
}

/** One Hrana stream: its own connection, SQL cache and transaction. */
interface Stream {
  baton: string;
  client?: Client;
  tx?: Transaction;
  sqls: Map<number, string>;
  ownsLock: boolean;
  closed: boolean;
  timer?: ReturnType<typeof setTimeout>;
}

/** A FIFO lock whose waiters give up after a while. */
class Lock {
  #held = false;
  #waiters: (() => void)[] = [];

  acquire(timeoutMs: number): Promise<boolean> {
    if (!this.#held) {
      this.#held = true;
      return Promise.resolve(true);
    }
    return new Promise((resolve) => {
      const grant = () => {
        clearTimeout(timer);
        resolve(true);
      };
      const timer = setTimeout(() => {
        this.#waiters = this.#waiters.filter((w) => w !== grant);
        resolve(false);
      }, timeoutMs);
      this.#waiters.push(grant);
    });
  }

  release(): void {
    const next = this.#waiters.shift();
    if (next) next(); // the lock passes on, still held
    else this.#held = false;
  }
}

const BEGIN =
  /^\s*BEGIN(?:\s+(DEFERRED|IMMEDIATE|EXCLUSIVE))?(?:\s+TRANSACTION)?(\s+READONLY)?\s*;?\s*$/i;
const COMMIT = /^\s*(?:COMMIT|END)(?:\s+TRANSACTION)?\s*;?\s*$/i;
const ROLLBACK = /^\s*ROLLBACK(?:\s+TRANSACTION)?\s*;?\s*$/i;

function base64(bytes: Uint8Array): string {
  let bin = "";
  for (let i = 0; i < bytes.length; i++) bin += String.fromCharCode(bytes[i]);
  return btoa(bin);
}

function fromBase64(text: string): Uint8Array {
  const bin = atob(text);
  const out = new Uint8Array(bin.length);
  for (let i = 0; i < bin.length; i++) out[i] = bin.charCodeAt(i);
  return out;
}

function decodeValue(v: WireValue): InValue {
  switch (v?.type) {
    case "null":
      return null;
    case "integer":
      return BigInt(v.value);
    case "float":
      return Number(v.value);
    case "text":
      return String(v.value);
    case "blob":
      return fromBase64(v.base64);
    default:
      throw new HranaError("Unknown type of value", "PROTOCOL");
  }
}

function encodeValue(v: unknown): WireValue {
  if (v === null || v === undefined) return { type: "null" };
  if (typeof v === "bigint") return { type: "integer", value: v.toString() };
  if (typeof v === "number") return { type: "float", value: v };
  if (typeof v === "string") return { type: "text", value: v };
  if (v instanceof ArrayBuffer) {
    return { type: "blob", base64: base64(new Uint8Array(v)) };
  }
  if (v instanceof Uint8Array) return { type: "blob", base64: base64(v) };
  return { type: "text", value: String(v) };
}

function empty(): WireStmtResult {
  return { cols: [], rows: [], affected_row_count: 0, last_insert_rowid: null };
}

function encodeResult(rs: ResultSet, wantRows: boolean): WireStmtResult {
  const width = rs.columns.length;
  return {
    cols: rs.columns.map((name, i) => ({
      name,
      decltype: rs.columnTypes[i] || null,
    })),
    rows: wantRows
      ? rs.rows.map((row) =>
        Array.from({ length: width }, (_, i) => encodeValue(row[i]))
      )
      : [],
    affected_row_count: rs.rowsAffected,
    last_insert_rowid: rs.lastInsertRowid?.toString() ?? null,
  };
}

/** A driver or bridge failure as a Hrana error. */
function toWireError(err: unknown): WireError {
  if (err instanceof HranaError) {
    return { message: err.message, code: err.code };
  }
  if (err instanceof LibsqlError) {
    const code = err.extendedCode ?? err.code;
    // LibsqlError prefixes the message with its code; the client adds it
    // back when it reads the error.
    const message = err.message.startsWith(`${err.code}: `)
      ? err.message.slice(err.code.length + 2)
      : err.message;
    return { message, code };
  }
  return {
    message: err instanceof Error ? err.message : String(err),
    code: "UNKNOWN",
  };
}

function json(body: unknown, status = 200): Response {
  // Exactly `application/json`: the client reads error bodies only then.
  return new Response(JSON.stringify(body), {
    status,
    headers: { "content-type": "application/json" },
  });
}

/**
 * Starts a libSQL-remote-protocol bridge on 127.0.0.1 (a random port) in
 * front of a local libSQL database file. Test support only: no TLS, no
 * limits, no cursors, no `describe`.
 *
 * @param options See {@linkcode LibsqlHttpBridgeOptions}.
 * @returns The running bridge.
 *
 * @example Usage
 * ```ts ignore
 * import { createClient } from "@libsql/client/web";
 * const bridge = await startLibsqlHttpBridge();
 * const client = createClient({ url: bridge.url, authToken: bridge.token });
 * console.log((await client.execute("SELECT 1 AS one")).rows[0].one); // 1
 * client.close();
 * await bridge.close();
 * ```
 */
export async function startLibsqlHttpBridge(
  options: LibsqlHttpBridgeOptions = {},
): Promise<LibsqlHttpBridge> {
  const token = options.token ?? crypto.randomUUID();
  const idleMs = options.streamIdleMs ?? 10_000;
  const lockWaitMs = options.lockWaitMs ?? 5_000;
  const tempDir = options.path === undefined
    ? await Deno.makeTempDir({ prefix: "portcullis-libsql-bridge-" })
    : undefined;
  const path = options.path ?? `${tempDir}/bridge.db`;
  const fileUrl = `file:${path}`;
  // Fail fast when the file cannot be opened.
  createClient({ url: fileUrl }).close();

  const lock = new Lock();
  const streams = new Map<string, Stream>();
  const stats: LibsqlBridgeStats = {
    httpRequests: 0,
    statements: 0,
    streams: 0,
  };
  let closing = false;

  function closeStream(s: Stream): void {
    if (s.closed) return;
    s.closed = true;
    clearTimeout(s.timer);
    streams.delete(s.baton);
    try {
      s.tx?.close(); // rolls back
    } finally {
      s.tx = undefined;
      s.client?.close();
      if (s.ownsLock) {
        s.ownsLock = false;
        lock.release();
      }
    }
  }

  function inTransaction(s: Stream): boolean {
    if (s.tx && s.tx.closed) {
      s.tx.close(); // SQLite rolled it back itself: give the connection back
      s.tx = undefined;
    }
    return s.tx !== undefined;
  }

  /** The stream's own client: one connection, integers as bigint. */
  function connect(s: Stream): Client {
    return s.client ??= createClient({
      url: fileUrl,
      intMode: "bigint",
      concurrency: 1,
    });
  }

  async function takeLock(s: Stream): Promise<void> {
    if (s.ownsLock) return;
    if (!(await lock.acquire(lockWaitMs))) {
      throw new HranaError(
        "database is locked (another stream holds a transaction)",
        "SQLITE_BUSY",
      );
    }
    if (s.closed) {
      lock.release();
      throw new HranaError("The stream was closed", "STREAM_CLOSED");
    }
    s.ownsLock = true;
  }

  function sqlOf(s: Stream, m: { sql?: string; sql_id?: number }): string {
    if (typeof m.sql === "string") return m.sql;
    const stored = m.sql_id === undefined ? undefined : s.sqls.get(m.sql_id);
    if (stored === undefined) {
      throw new HranaError(
        `SQL text ${m.sql_id} is not stored`,
        "SQL_NOT_FOUND",
      );
    }
    return stored;
  }

  async function runStmt(s: Stream, stmt: WireStmt): Promise<WireStmtResult> {
    if (closing) throw new HranaError("The bridge is closing", "CLOSED");
    await takeLock(s);
    stats.statements++;
    const sql = sqlOf(s, stmt);
    const client = connect(s);
    const begin = BEGIN.exec(sql);
    if (begin) {
      if (inTransaction(s)) {
        throw new HranaError(
          "cannot start a transaction within a transaction",
          "SQLITE_ERROR",
        );
      }
      const how = (begin[1] ?? "").toUpperCase();
      const mode: TransactionMode = begin[2]
        ? "read"
        : how === "IMMEDIATE" || how === "EXCLUSIVE"
        ? "write"
        : "deferred";
      s.tx = await client.transaction(mode);
      return empty();
    }
    if (COMMIT.test(sql) || ROLLBACK.test(sql)) {
      if (!inTransaction(s)) {
        throw new HranaError(
          `cannot ${
            COMMIT.test(sql) ? "commit" : "rollback"
          } - no transaction is active`,
          "SQLITE_ERROR",
        );
      }
      const tx = s.tx!;
      s.tx = undefined;
      if (COMMIT.test(sql)) await tx.commit();
      else await tx.rollback();
      return empty();
    }
    const named = stmt.named_args ?? [];
    const args = named.length > 0 && (stmt.args ?? []).length === 0
      ? Object.fromEntries(named.map((a) => [a.name, decodeValue(a.value)]))
      : (stmt.args ?? []).map(decodeValue);
    const input = { sql, args };
    const rs = inTransaction(s)
      ? await s.tx!.execute(input)
      : await client.execute(input);
    return encodeResult(rs, stmt.want_rows !== false);
  }

  function check(c: WireCond, outcomes: (string | null)[], s: Stream): boolean {
    switch (c?.type) {
      case "ok":
      case "error":
        return outcomes[c.step] === c.type;
      case "not":
        return !check(c.cond, outcomes, s);
      case "and":
        return c.conds.every((x) => check(x, outcomes, s));
      case "or":
        return c.conds.some((x) => check(x, outcomes, s));
      case "is_autocommit":
        return !inTransaction(s);
      default:
        throw new HranaError("Unknown type of batch condition", "PROTOCOL");
    }
  }

  async function handleRequest(
    s: Stream,
    r: WireRequest,
  ): Promise<Record<string, unknown>> {
    if (s.closed) throw new HranaError("The stream is closed", "STREAM_CLOSED");
    switch (r?.type) {
      case "close":
        closeStream(s);
        return { type: "close" };
      case "execute":
        return { type: "execute", result: await runStmt(s, r.stmt ?? {}) };
      case "batch": {
        const steps = r.batch?.steps ?? [];
        const outcomes: (string | null)[] = [];
        const results: (WireStmtResult | null)[] = [];
        const errors: (WireError | null)[] = [];
        for (const step of steps) {
          if (step.condition && !check(step.condition, outcomes, s)) {
            outcomes.push(null);
            results.push(null);
            errors.push(null);
            continue;
          }
          try {
            results.push(await runStmt(s, step.stmt));
            errors.push(null);
            outcomes.push("ok");
          } catch (err) {
            results.push(null);
            errors.push(toWireError(err));
            outcomes.push("error");
          }
        }
        return {
          type: "batch",
          result: { step_results: results, step_errors: errors },
        };
      }
      case "sequence": {
        await takeLock(s);
        stats.statements++;
        const sql = sqlOf(s, r);
        if (inTransaction(s)) await s.tx!.executeMultiple(sql);
        else await connect(s).executeMultiple(sql);
        return { type: "sequence" };
      }
      case "store_sql":
        s.sqls.set(Number(r.sql_id), String(r.sql));
        return { type: "store_sql" };
      case "close_sql":
        s.sqls.delete(Number(r.sql_id));
        return { type: "close_sql" };
      case "get_autocommit":
        return { type: "get_autocommit", is_autocommit: !inTransaction(s) };
      default:
        throw new HranaError(
          `The bridge does not support requests of type ${
            JSON.stringify(r?.type)
          }`,
          "UNSUPPORTED",
        );
    }
  }

  async function pipeline(body: {
    baton?: string | null;
    requests?: WireRequest[];
  }): Promise<Response> {
    if (!body || !Array.isArray(body.requests)) {
      return json(
        { message: "Expected { baton, requests }", code: "PROTOCOL" },
        400,
      );
    }
    let s: Stream | undefined;
    if (body.baton == null) {
      s = {
        baton: crypto.randomUUID(),
        sqls: new Map(),
        ownsLock: false,
        closed: false,
      };
      streams.set(s.baton, s);
      stats.streams++;
    } else {
      s = streams.get(body.baton);
      if (!s) {
        return json({
          message: "The stream has expired or does not exist",
          code: "STREAM_EXPIRED",
        }, 400);
      }
    }
    clearTimeout(s.timer);
    const results = [];
    for (const r of body.requests) {
      try {
        results.push({ type: "ok", response: await handleRequest(s, r) });
      } catch (err) {
        results.push({ type: "error", error: toWireError(err) });
      }
    }
    if (!s.closed) {
      if (s.ownsLock && !inTransaction(s)) {
        s.ownsLock = false;
        lock.release();
      }
      const stream = s;
      s.timer = setTimeout(() => closeStream(stream), idleMs);
    }
    return json({
      baton: s.closed ? null : s.baton,
      base_url: null,
      results,
    });
  }

  async function handle(req: Request): Promise<Response> {
    stats.httpRequests++;
    const path = new URL(req.url).pathname.replace(/\/+$/, "");
    if (req.method === "GET") {
      return ["", "/health", "/v2", "/v3"].includes(path)
        ? new Response(null, { status: 200 })
        : new Response("Not found", { status: 404 });
    }
    if (req.headers.get("authorization") !== `Bearer ${token}`) {
      await req.body?.cancel();
      return json({
        message: "Unauthorized: missing or wrong token",
        code: "UNAUTHORIZED",
      }, 401);
    }
    if (req.method !== "POST" || !/^\/v[23]\/pipeline$/.test(path)) {
      await req.body?.cancel();
      return json({
        message: `No endpoint ${req.method} ${path}`,
        code: "NOT_FOUND",
      }, 404);
    }
    let body;
    try {
      body = await req.json();
    } catch {
      return json({ message: "The body is not JSON", code: "PROTOCOL" }, 400);
    }
    return await pipeline(body);
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
    path,
    stats: () => ({ ...stats }),
    close: async () => {
      closing = true;
      for (const s of [...streams.values()]) closeStream(s);
      await server.shutdown();
      for (const s of [...streams.values()]) closeStream(s);
      if (tempDir) await Deno.remove(tempDir, { recursive: true });
    },
  };
}
