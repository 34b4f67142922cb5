/**
 * Handlers, middleware and their composition.
 *
 * @module
 */

/**
 * A request handler. Extra arguments (Cloudflare's `env` and `ctx`, Deno's
 * `info`) pass through untouched.
 *
 * @typeParam A The extra arguments.
 */
export type Handler<A extends unknown[] = unknown[]> = (
  req: Request,
  ...rest: A
) => Response | Promise<Response>;

/**
 * Calls the rest of the chain. Without an argument it passes the same
 * request on; identity is attached to that request object.
 */
export type Next = (req?: Request) => Promise<Response>;

/**
 * A middleware: looks at the request, then answers itself or calls `next`.
 *
 * @typeParam A The extra handler arguments, passed through.
 */
export type Middleware<A extends unknown[] = unknown[]> = (
  req: Request,
  next: Next,
  ...rest: A
) => Response | Promise<Response>;

/**
 * Wraps a handler in middleware, outermost first. Extra arguments reach
 * every middleware and the handler unchanged. A middleware that throws
 * propagates the exception (it never falls through to the handler).
 *
 * @param middleware The middleware, outermost first.
 * @param handler The handler at the end of the chain.
 * @returns One handler.
 *
 * @example Usage
 * ```ts ignore
 * import { compose, identityMiddleware, requireAuth } from "@portcullis/auth";
 * const handler = compose([identityMiddleware(sessions), requireAuth()], (req) => new Response("secret"));
 * Deno.serve(handler);
 * ```
 */
export function compose<A extends unknown[]>(
  middleware: readonly Middleware<A>[],
  handler: Handler<A>,
): Handler<A> {
  // The chain is built once: each link calls its middleware with a `next`
  // bound to the rest of the chain. No async frames and, for up to two extra
  // arguments (Deno's `info`, Bun's `server`, Cloudflare's `env` and `ctx`),
  // no spread calls: this wraps every request.
  let chain = (r: Request, rest: A): Promise<Response> => {
    try {
      return Promise.resolve(call(handler, r, rest));
    } catch (error) {
      return Promise.reject(error);
    }
  };
  for (let i = middleware.length - 1; i >= 0; i--) {
    const link = middleware[i], inner = chain;
    chain = (r, rest) => {
      try {
        return Promise.resolve(
          callWith(link, r, (next?: Request) => inner(next ?? r, rest), rest),
        );
      } catch (error) {
        return Promise.reject(error);
      }
    };
  }
  const run = chain;
  return (req: Request, ...rest: A): Promise<Response> => run(req, rest);
}

/** `handler(r, ...rest)`, with the common arities called directly. */
function call<A extends unknown[]>(
  handler: Handler<A>,
  r: Request,
  rest: A,
): Response | Promise<Response> {
  const h = handler as (...args: unknown[]) => Response | Promise<Response>;
  switch (rest.length) {
    case 0:
      return h(r);
    case 1:
      return h(r, rest[0]);
    case 2:
      return h(r, rest[0], rest[1]);
    default:
      return h(r, ...rest);
  }
}

/** `link(r, next, ...rest)`, with the common arities called directly. */
function callWith<A extends unknown[]>(
  link: Middleware<A>,
  r: Request,
  next: Next,
  rest: A,
): Response | Promise<Response> {
  const m = link as (...args: unknown[]) => Response | Promise<Response>;
  switch (rest.length) {
    case 0:
      return m(r, next);
    case 1:
      return m(r, next, rest[0]);
    case 2:
      return m(r, next, rest[0], rest[1]);
    default:
      return m(r, next, ...rest);
  }
}
