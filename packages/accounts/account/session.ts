/**
 * Who is signed in (`GET /api/me`) and signing out (`POST /logout`).
 *
 * @module
 */
import {
  AuthError,
  currentIdentity,
  errorResponse,
  requireAuthenticated,
  requirePerson,
  signOut,
} from "@portcullis/auth";
import type { ModuleContext } from "../context.ts";
import { record } from "../lifecycle.ts";
import { json, redirect } from "../respond.ts";

/**
 * `GET /api/me`: 200 `{subject, email, verified}`, with `apiKey` (`{id,
 * scopes}`) for a request an API key authenticated and `actor` for an
 * operator acting as the user; 401 anonymous.
 */
export async function me(ctx: ModuleContext, req: Request): Promise<Response> {
  const identity = currentIdentity(req);
  const user = identity === null
    ? null
    : await ctx.credentials.findById(identity.subject);
  if (identity === null || user === null) {
    return errorResponse(req, 401, "unauthenticated", "Sign in to continue");
  }
  return json({
    subject: user.id,
    email: user.email,
    verified: user.verifiedAt > 0,
    ...(identity.apiKey === undefined ? {} : {
      apiKey: { id: identity.apiKey.id, scopes: identity.apiKey.scopes },
    }),
    ...(identity.actor === undefined ? {} : { actor: identity.actor }),
  });
}

/**
 * `POST /logout`: revokes the session's jti. Bearer → 204; form or cookie →
 * 303 to `/login` with the clearing cookie; an API key: 403
 * `api_key_refused`. When the session store cannot
 * be asked (the session could be neither checked nor revoked) the answer is
 * 503 with `Retry-After`, and the cookie is kept: clearing it and saying
 * "signed out" would hide a session that still works.
 */
export async function logout(
  ctx: ModuleContext,
  req: Request,
): Promise<Response> {
  const bearer = req.headers.has("authorization");
  // An API key is no session to sign out: it is revoked where keys are.
  if (currentIdentity(req)?.apiKey !== undefined) {
    return requirePerson(req, { allowActor: true })!;
  }
  const denied = requireAuthenticated(req);
  if (denied !== null && (bearer || denied.status === 503)) return denied;
  let clearCookie: string | null;
  const ending = currentIdentity(req);
  try {
    ({ clearCookie } = await signOut(req));
  } catch (error) {
    if (error instanceof AuthError && error.code === "STORE_UNAVAILABLE") {
      ctx.log(`logout: session store unavailable: ${error.message}`);
      return logoutUnavailable(req);
    }
    throw error;
  }
  if (ending !== null) {
    await ctx.registry.remove(ending.subject, ending.jti).catch(() => {});
    await record(ctx, "logout", ending.subject, req);
  }
  if (bearer) return new Response(null, { status: 204 });
  return redirect("/login", [
    clearCookie,
    await ctx.flash.set({ kind: "notice", message: "You are signed out." }),
  ]);
}

/**
 * The answer to a logout that could not revoke the session: 503 with
 * `Retry-After`, no `Set-Cookie`.
 *
 * @param req The request.
 * @returns The response.
 */
export function logoutUnavailable(req: Request): Response {
  return errorResponse(
    req,
    503,
    "unavailable",
    "Signing out is temporarily unavailable, try again shortly",
    { "retry-after": "5" },
  );
}
