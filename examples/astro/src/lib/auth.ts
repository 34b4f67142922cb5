// portcullis in Astro: the whole recipe. `authMiddleware` (used by
// src/middleware.ts) runs portcullis's identityMiddleware around Astro's
// `next()`, so every request gets `context.locals.user` and every unsafe
// request gets portcullis's cross-origin check; the routes in PROTECTED also
// go through `requireAuth()`. `startSession` and `endSession` are what pages
// and endpoints call.
import {
  currentIdentity,
  identityMiddleware,
  MemoryKV,
  requireAuth,
  signIn,
  signOut,
} from "@portcullis/auth";
import type { CheckedCredential, SignInResult } from "@portcullis/auth/http";
import type { MiddlewareHandler } from "astro";

// The secret (AUTH_SECRET) and the public origin (APP_ORIGIN) are read on
// the first request, so `astro build` needs neither. MemoryKV keeps the
// revocation list in this process: use a shared store in production
// (@portcullis/libsql-kv, @portcullis/redis, …).
const identity = identityMiddleware({ store: new MemoryKV() });
const signedInOnly = requireAuth(); // browsers: 303 to /login; others: 401

/** Route patterns (as in src/pages) that need a signed-in user. */
const PROTECTED = new Set(["/account"]);

// Set-Cookie values that startSession/endSession made for a request.
const outgoing = new WeakMap<Request, string[]>();

/** The middleware: identity on `context.locals`, CSRF, protected routes. */
export const authMiddleware: MiddlewareHandler = (context, next) =>
  identity(context.request, () => {
    context.locals.identity = currentIdentity(context.request);
    context.locals.user = context.locals.identity?.subject ?? null;
    const render = async () => withCookies(await next(), context.request);
    return PROTECTED.has(context.routePattern)
      ? Promise.resolve(signedInOnly(context.request, render))
      : render();
  });

/** What pages (`Astro`) and endpoints (`context`) both carry. */
interface Context {
  request: Request;
  locals: App.Locals;
}

/** Starts a session (the answer's cookie is set by `authMiddleware`). */
export async function startSession(
  context: Context,
  who: string | CheckedCredential,
): Promise<SignInResult | null> {
  const session = typeof who === "string"
    ? await signIn(context.request, who)
    : await signIn(context.request, who);
  if (session === null) return null;
  if (session.setCookie) queue(context.request, session.setCookie);
  context.locals.identity = session.identity;
  context.locals.user = session.identity.subject;
  return session;
}

/** Ends the request's session: revoked, and the cookie cleared. */
export async function endSession(context: Context): Promise<void> {
  const { clearCookie } = await signOut(context.request);
  if (clearCookie) queue(context.request, clearCookie);
  context.locals.identity = null;
  context.locals.user = null;
}

function queue(req: Request, cookie: string): void {
  outgoing.set(req, [...(outgoing.get(req) ?? []), cookie]);
}

function withCookies(response: Response, req: Request): Response {
  const cookies = outgoing.get(req) ?? [];
  if (cookies.length === 0) return response;
  // Some responses (Response.redirect, fetch) have immutable headers.
  const out = new Response(response.body, response);
  for (const cookie of cookies) out.headers.append("set-cookie", cookie);
  return out;
}
