/**
 * `Deno.serve` that survives the end of its accept loop, for
 * `serveAccounts` (`./mod.ts`).
 *
 * What Deno 2.9 does: its accept loop (`op_http_serve` in
 * `ext/http/http_next.rs`) ends at the first error `accept()` returns, and
 * `Too many open files` (EMFILE) is one: every open connection holds a
 * file, so a client that opens connections and sends nothing reaches the
 * process's limit (`ulimit -n`). The listener is then closed, the server's
 * `finished` promise rejects with `Deno.errors.Http`, and where nobody
 * handles that rejection the process exits with a stack trace. Nothing in
 * Deno closes a connection that never sends a request, and `Deno.serve`
 * takes no listener of ours, so the app cannot time such connections out
 * itself.
 *
 * What {@linkcode serveResilient} does instead: it handles the rejection,
 * logs one line, shuts the dead server down gracefully and listens on the
 * same address again, every {@linkcode RETRY_MS} until it can. The graceful
 * shutdown closes the server's idle connections (those that never sent a
 * request, and keep-alive ones between two requests), which gives their
 * files back; a request whose handler is running is answered, but one whose
 * body is still arriving loses it (Deno ends the body's stream:
 * `BadResource: Cannot read body as underlying resource unavailable`).
 *
 * @module
 */

/** How long to wait before listening again after the accept loop ended. */
export const RETRY_MS = 250;

/** The process's limit on open files, where the system tells it. */
export interface OpenFileLimit {
  /** The soft limit (`ulimit -n`), the one that applies. */
  soft: number;
  /** The hard limit, up to which the soft one may be raised. */
  hard: number;
}

/**
 * Reads the limit on open files from `/proc/self/limits` (Linux).
 *
 * @returns The limits, or null where they cannot be read (another system,
 * no read permission) or are unlimited.
 */
export function openFileLimit(): OpenFileLimit | null {
  let text: string;
  try {
    text = Deno.readTextFileSync("/proc/self/limits");
  } catch {
    return null;
  }
  const match = text.match(/^Max open files\s+(\d+)\s+(\d+|unlimited)/m);
  if (!match) return null;
  const soft = Number(match[1]);
  const hard = match[2] === "unlimited" ? Infinity : Number(match[2]);
  return { soft, hard };
}

/** Options of {@linkcode serveResilient}. */
export interface ResilientServeOptions {
  /** The port; 0 for one the system picks (kept when listening again). */
  port: number;
  /** The address to listen on; default `Deno.serve`'s (`0.0.0.0`). */
  hostname?: string;
  /** Called once, when the server first listens. */
  onListen(addr: Deno.NetAddr): void;
  /** Where the line about the accept loop's end goes. */
  log(line: string): void;
  /** The limit on open files, for the log line; default read at the call. */
  limit?: OpenFileLimit | null;
  /** The wait before listening again; default {@linkcode RETRY_MS}. */
  retryMs?: number;
}

/**
 * Whether an error of the accept loop is the limit on open files: EMFILE
 * (the process's) or ENFILE (the system's).
 */
function isFileLimit(error: unknown): boolean {
  const message = error instanceof Error ? error.message : String(error);
  return /os error 2[34]\b|too many open files/i.test(message);
}

/** The error's message on one line, without Deno's `Error: ` prefix. */
function oneLine(error: unknown): string {
  const message = error instanceof Error ? error.message : String(error);
  return (message.split("\n")[0] ?? "").replace(/^Error: /, "");
}

/**
 * Serves `handler` with `Deno.serve` and, when its accept loop ends with an
 * error (the limit on open files, typically), keeps the process up: logs
 * one line (no stack) per episode, shuts that server down gracefully and
 * listens on the same address again until it can; the first request that
 * a new listener serves logs that it accepts again.
 *
 * @param options Where to listen and what to log.
 * @param handler The app.
 * @returns A server whose `shutdown` stops every listener it made and whose
 * `finished` settles once shut down (an error at the first listen is
 * thrown, as `Deno.serve` throws it).
 */
export function serveResilient(
  options: ResilientServeOptions,
  handler: Deno.ServeHandler<Deno.NetAddr>,
): Deno.HttpServer<Deno.NetAddr> {
  const limit = options.limit === undefined ? openFileLimit() : options.limit;
  const retryMs = options.retryMs ?? RETRY_MS;
  let hostname = options.hostname;
  let port = options.port;
  let current: Deno.HttpServer<Deno.NetAddr>;
  let generation = 0;
  let degraded = false;
  let stopping = false;
  let referenced = true;
  let retry: ReturnType<typeof setTimeout> | undefined;
  /** Old servers shutting down (their requests in progress). */
  const draining = new Set<Promise<void>>();
  let resolveFinished!: () => void;
  const finished = new Promise<void>((resolve) => resolveFinished = resolve);

  const listen = (first: boolean): void => {
    const mine = ++generation;
    const server = Deno.serve({
      hostname,
      port,
      onListen: first ? options.onListen : () => {},
      // Deno's own answer to a handler that throws logs a stack: one line.
      onError: (error) => {
        options.log(`unexpected error in the handler: ${oneLine(error)}`);
        return new Response("Internal Server Error", { status: 500 });
      },
    }, (req, info) => {
      if (degraded && mine === generation) {
        degraded = false;
        options.log(
          `Accepting new connections again on port ${port}.`,
        );
      }
      return handler(req, info);
    });
    if (first) {
      hostname = server.addr.hostname;
      port = server.addr.port;
    }
    if (!referenced) server.unref();
    current = server;
    server.finished.then(
      () => {
        if (stopping && server === current) resolveFinished();
      },
      (error) => ended(server, error),
    );
  };

  const ended = (server: Deno.HttpServer<Deno.NetAddr>, error: unknown) => {
    if (!degraded) {
      degraded = true;
      options.log(
        isFileLimit(error)
          ? `Too many open files${
            limit ? ` (limit ${limit.soft}, ulimit -n)` : ""
          }: not accepting connections until some close; closing the idle ones. Raise the limit, and serve behind a proxy that closes idle connections.`
          : `The server stopped accepting connections (${
            oneLine(error)
          }); listening again.`,
      );
    }
    // Close the idle connections (their files are what the accept loop
    // lacked); handlers that are running still answer.
    const drain = server.shutdown().catch(() => {});
    draining.add(drain);
    drain.then(() => draining.delete(drain));
    if (stopping) {
      if (server === current) drain.then(resolveFinished);
      return;
    }
    if (server === current) schedule();
  };

  const schedule = () => {
    const timer = setTimeout(() => {
      retry = undefined;
      if (stopping) return;
      try {
        listen(false);
      } catch {
        // No file for the listener yet, or the port is taken: later.
        schedule();
      }
    }, retryMs);
    retry = timer;
    if (!referenced) Deno.unrefTimer(timer);
  };

  listen(true);

  return {
    get addr() {
      return current.addr;
    },
    finished,
    ref() {
      referenced = true;
      current.ref();
      if (retry !== undefined) Deno.refTimer(retry);
    },
    unref() {
      referenced = false;
      current.unref();
      if (retry !== undefined) Deno.unrefTimer(retry);
    },
    async shutdown() {
      stopping = true;
      if (retry !== undefined) {
        clearTimeout(retry);
        retry = undefined;
      }
      await current.shutdown().catch(() => {});
      await Promise.all(draining);
      resolveFinished();
    },
    [Symbol.asyncDispose]() {
      return this.shutdown();
    },
  };
}
