/**
 * Runs a Web-standard handler on Node's `node:http` (Node ≥ 20): an
 * `IncomingMessage` becomes a `Request` (body streamed, aborted when the
 * client goes away), and the `Response` is written back with every
 * `Set-Cookie` header kept separate.
 *
 * The handler's second argument mirrors Deno's `ServeHandlerInfo`
 * (`{ remoteAddr: { hostname, port, transport } }`), so code that reads the
 * client's address from it works unchanged.
 *
 * @example Usage
 * ```ts ignore
 * import { serve } from "@portcullis/auth/adapters/node";
 * const server = await serve((req) => new Response("hi"), { port: 3000 });
 * ```
 *
 * @module
 */
import {
  createServer,
  type IncomingMessage,
  type Server,
  type ServerResponse,
} from "node:http";

/** What the handler gets after the request, like Deno's `ServeHandlerInfo`. */
export interface NodeHandlerInfo {
  /** The peer: address, port, `tcp`. */
  remoteAddr: { hostname: string; port: number; transport: "tcp" };
  /** The original message, for code that needs Node specifics. */
  incoming: IncomingMessage;
}

/** A handler the adapter can run. */
export type NodeWebHandler = (
  req: Request,
  info: NodeHandlerInfo,
) => Response | Promise<Response>;

/** Options of {@linkcode toNodeListener} and {@linkcode serve}. */
export interface NodeAdapterOptions {
  /**
   * The origin request URLs are built on, such as `https://app.example`.
   * Default: `http://` plus the `Host` header. (The auth stack compares
   * against its own configured origin, never this URL's host.)
   */
  origin?: string;
  /** Receives a handler's exception; the client gets a plain 500. Default `console.error`. */
  onError?: (error: unknown) => void;
}

/**
 * Converts Node's request into a `Request`.
 *
 * @param incoming The message from `node:http`.
 * @param origin The origin to build the URL on (see {@linkcode NodeAdapterOptions.origin}).
 * @param signal Aborts the body and the handler when the client leaves.
 * @returns The request.
 * @throws {TypeError} When the URL or a header is invalid.
 */
export function toRequest(
  incoming: IncomingMessage,
  origin?: string,
  signal?: AbortSignal,
): Request {
  const base = origin ?? `http://${incoming.headers.host ?? "localhost"}`;
  const url = new URL(incoming.url ?? "/", base);
  const headers = new Headers();
  const raw = incoming.rawHeaders;
  for (let i = 0; i + 1 < raw.length; i += 2) {
    if (!raw[i].startsWith(":")) headers.append(raw[i], raw[i + 1]);
  }
  const method = incoming.method ?? "GET";
  const init: RequestInit & { duplex?: "half" } = { method, headers, signal };
  if (method !== "GET" && method !== "HEAD") {
    const chunks = incoming[Symbol.asyncIterator]();
    init.body = new ReadableStream<Uint8Array>({
      async pull(controller) {
        const { value, done } = await chunks.next();
        if (done) controller.close();
        else controller.enqueue(new Uint8Array(value as Uint8Array));
      },
      async cancel() {
        await chunks.return?.();
      },
    });
    init.duplex = "half";
  }
  return new Request(url, init);
}

/**
 * Writes a `Response` to Node's response, streaming the body with
 * back-pressure.
 *
 * @param out Node's response.
 * @param response The response to write.
 */
export async function writeResponse(
  out: ServerResponse,
  response: Response,
): Promise<void> {
  out.statusCode = response.status;
  if (response.statusText) out.statusMessage = response.statusText;
  for (const [name, value] of response.headers) {
    if (name !== "set-cookie") out.setHeader(name, value);
  }
  const cookies = response.headers.getSetCookie();
  if (cookies.length > 0) out.setHeader("set-cookie", cookies);
  if (response.body === null) {
    out.end();
    return;
  }
  const reader = response.body.getReader();
  try {
    while (true) {
      const { value, done } = await reader.read();
      if (done) break;
      if (!out.write(value)) {
        await new Promise<void>((resolve) => out.once("drain", resolve));
      }
    }
    out.end();
  } catch (error) {
    out.destroy(error as Error);
  } finally {
    reader.releaseLock();
  }
}

/**
 * Makes a `node:http` request listener from a handler.
 *
 * @param handler The Web-standard handler.
 * @param options See {@linkcode NodeAdapterOptions}.
 * @returns A listener for `http.createServer`.
 */
export function toNodeListener(
  handler: NodeWebHandler,
  options: NodeAdapterOptions = {},
): (incoming: IncomingMessage, out: ServerResponse) => void {
  const onError = options.onError ?? ((e: unknown) => console.error(e));
  return (incoming, out) => {
    const aborter = new AbortController();
    out.once("close", () => {
      if (!out.writableFinished) aborter.abort();
    });
    (async () => {
      let response: Response;
      try {
        const req = toRequest(incoming, options.origin, aborter.signal);
        response = await handler(req, {
          remoteAddr: {
            hostname: incoming.socket.remoteAddress ?? "",
            port: incoming.socket.remotePort ?? 0,
            transport: "tcp",
          },
          incoming,
        });
      } catch (error) {
        onError(error);
        response = new Response("Internal Server Error", { status: 500 });
      }
      await writeResponse(out, response);
    })().catch((error) => {
      onError(error);
      out.destroy();
    });
  };
}

/**
 * Starts a `node:http` server for a handler.
 *
 * @param handler The Web-standard handler.
 * @param options The port (default 3000), the host (default all
 * interfaces), and {@linkcode NodeAdapterOptions}.
 * @returns The listening server.
 */
export function serve(
  handler: NodeWebHandler,
  options: NodeAdapterOptions & { port?: number; hostname?: string } = {},
): Promise<Server> {
  const server = createServer(toNodeListener(handler, options));
  return new Promise((resolve, reject) => {
    server.once("error", reject);
    server.listen(options.port ?? 3000, options.hostname, () => {
      server.off("error", reject);
      resolve(server);
    });
  });
}
