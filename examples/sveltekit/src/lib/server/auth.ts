// portcullis in SvelteKit: the whole recipe. `handleAuth` (used by
// hooks.server.ts) runs portcullis's identityMiddleware around SvelteKit's
// `resolve`, so every request gets `event.locals.user` and every unsafe
// request gets portcullis's cross-origin check; routes in the `(protected)`
// group also go through `requireAuth()`. `startSession` and `endSession`
// are what form actions and endpoints call.
import {
  currentIdentity,
  identityMiddleware,
  MemoryKV,
  requireAuth,
  signIn,
  signOut,
} from "@portcullis/auth";
import type { CheckedCredential, SignInResult } from "@portcullis/auth/http";
import type { Handle, RequestEvent } from "@sveltejs/kit";

// The secret (AUTH_SECRET) and the public origin (APP_ORIGIN) are read on
// the first request, so `vite build` needs neither. MemoryKV keeps the
// revocation list in this process: use a shared store in production
// (@portcullis/libsql-kv, @portcullis/redis, …).
const identity = identityMiddleware({ store: new MemoryKV() });
const signedInOnly = requireAuth(); // browsers: 303 to /login; others: 401

// Set-Cookie values that startSession/endSession made for a request.
const outgoing = new WeakMap<Request, string[]>();

/** The `handle` hook: identity on `event.locals`, CSRF, protected routes. */
export const handleAuth: Handle = ({ event, resolve }) =>
  identity(event.request, () => {
    event.locals.identity = currentIdentity(event.request);
    event.locals.user = event.locals.identity?.subject ?? null;
    const render = async () => withCookies(await resolve(event), event);
    return event.route.id?.startsWith("/(protected)/")
      ? Promise.resolve(signedInOnly(event.request, render))
      : render();
  });

/** Starts a session (the answer's cookie is set by `handleAuth`). */
export async function startSession(
  event: RequestEvent,
  who: string | CheckedCredential,
): Promise<SignInResult | null> {
  const session = typeof who === "string"
    ? await signIn(event.request, who)
    : await signIn(event.request, who);
  if (session === null) return null;
  if (session.setCookie) queue(event.request, session.setCookie);
  event.locals.identity = session.identity;
  event.locals.user = session.identity.subject;
  return session;
}

/** Ends the request's session: revoked, and the cookie cleared. */
export async function endSession(event: RequestEvent): Promise<void> {
  const { clearCookie } = await signOut(event.request);
  if (clearCookie) queue(event.request, clearCookie);
  event.locals.identity = null;
  event.locals.user = null;
}

function queue(req: Request, cookie: string): void {
  outgoing.set(req, [...(outgoing.get(req) ?? []), cookie]);
}

function withCookies(response: Response, event: RequestEvent): Response {
  const cookies = outgoing.get(event.request) ?? [];
  if (cookies.length === 0) return response;
  // Some responses (Response.redirect, fetch) have immutable headers.
  const out = new Response(response.body, response);
  for (const cookie of cookies) out.headers.append("set-cookie", cookie);
  return out;
}
