// portcullis in Elysia: the whole recipe. `serve(app)` runs portcullis's
// identityMiddleware around Elysia's `app.handle`, so every unsafe request
// gets portcullis's cross-origin check and the same Request reaches the
// handlers; the `auth` plugin derives the typed `user` and `identity` from it
// and offers the `signedIn` macro (requireAuth(): browsers 303 to /login,
// others 401). `startSession` and `endSession` are what handlers call.
import {
  compose,
  currentIdentity,
  currentUser,
  identityMiddleware,
  MemoryKV,
  requireAuth,
  signIn,
  signOut,
} from "@portcullis/auth";
import type { CheckedCredential, SignInResult } from "@portcullis/auth/http";
import { Elysia } from "elysia";

// The secret (AUTH_SECRET) and the public origin (APP_ORIGIN) are read on
// the first request. MemoryKV keeps the revocation list in this process:
// use a shared store in production (@portcullis/libsql-kv, @portcullis/redis).
const identity = identityMiddleware({ store: new MemoryKV() });
const signedInOnly = requireAuth();
const PASS = new Response(null);

// Set-Cookie values that startSession/endSession made for a request.
const outgoing = new WeakMap<Request, string[]>();
// The requests serve() saw: an app started by app.listen() instead would
// run without identity or cross-origin protection, so it answers 500.
const served = new WeakSet<Request>();

/** The plugin: `user` and `identity` on every context, and `signedIn`. */
export const auth = new Elysia({ name: "portcullis" })
  .derive({ as: "global" }, ({ request }) => {
    if (!served.has(request)) {
      throw new Error(
        "portcullis did not see this request: serve the app with serve(app), not app.listen()",
      );
    }
    return {
      /** The signed-in subject id, or `null`. */
      user: currentUser(request),
      /** The verified session (subject, jti, expiry), or `null`. */
      identity: currentIdentity(request),
    };
  })
  .macro({
    /** `{ signedIn: true }` on a route: requireAuth() before the handler. */
    signedIn: {
      async beforeHandle({ request }) {
        const answer = await signedInOnly(request, () => Promise.resolve(PASS));
        if (answer !== PASS) return answer;
      },
    },
  });

/**
 * The `fetch` handler for `Bun.serve`: identity and CSRF around the app.
 *
 * @param app The Elysia app (it must `.use(auth)`).
 * @returns The handler.
 */
export function serve(
  app: { handle(req: Request): Promise<Response> },
): (req: Request) => Response | Promise<Response> {
  return compose([identity], async (req) => {
    served.add(req);
    const response = await app.handle(req);
    const cookies = outgoing.get(req) ?? [];
    if (cookies.length === 0) return response;
    const out = new Response(response.body, response); // headers may be immutable
    for (const cookie of cookies) out.headers.append("set-cookie", cookie);
    return out;
  });
}

/** Starts a session (the answer's cookie is set by `serve`). */
export async function startSession(
  request: Request,
  who: string | CheckedCredential,
): Promise<SignInResult | null> {
  const session = typeof who === "string"
    ? await signIn(request, who)
    : await signIn(request, who);
  if (session?.setCookie) queue(request, session.setCookie);
  return session;
}

/** Ends the request's session: revoked, and the cookie cleared. */
export async function endSession(request: Request): Promise<void> {
  const { clearCookie } = await signOut(request);
  if (clearCookie) queue(request, clearCookie);
}

function queue(req: Request, cookie: string): void {
  outgoing.set(req, [...(outgoing.get(req) ?? []), cookie]);
}
