// A small protected app for HTTP tests: every route behind identityMiddleware.
import {
  authorize,
  compose,
  currentUser,
  definePolicy,
  identityMiddleware,
  requireAuth,
  requireAuthenticated,
  requireVerified,
  signIn,
  signOut,
} from "../../mod.ts";
import type { AuthEvent, Handler, SessionManager } from "../../mod.ts";
import type { IdentityOptions } from "../../lib/http/mod.ts";

export const owners = new Map([["n1", "alice"], ["n2", "bob"]]);
export const notes = definePolicy<"view" | "edit">({
  can: (p, action, id) =>
    p !== null && (action === "view" || p.is(owners.get(id) ?? "")),
});

export function makeApp(
  sessions: SessionManager,
  options: IdentityOptions = {},
): { handler: Handler; events: AuthEvent[]; calls: string[] } {
  const events: AuthEvent[] = [];
  const calls: string[] = [];
  const idm = identityMiddleware(sessions, {
    isVerified: (s) => s === "alice",
    onEvent: (e) => events.push(e),
    ...options,
  });
  const route = async (req: Request): Promise<Response> => {
    const url = new URL(req.url);
    const path = url.pathname;
    calls.push(`${req.method} ${path}`);
    if (path === "/login" && req.method === "POST") {
      const subject = url.searchParams.get("as") ?? "alice";
      const s = await signIn(req, subject);
      return Response.json({ token: s.token, expiresAt: s.expiresAt }, {
        headers: { "set-cookie": s.setCookie! },
      });
    }
    if (path === "/logout" && req.method === "POST") {
      const out = await signOut(req);
      return new Response(null, {
        status: 204,
        headers: { "set-cookie": out.clearCookie! },
      });
    }
    if (path === "/me") {
      const denied = requireAuthenticated(req);
      if (denied) return denied;
      return Response.json({ subject: currentUser(req) });
    }
    if (path === "/verified") {
      const denied = await requireVerified(req);
      if (denied) return denied;
      return new Response("verified");
    }
    if (path.startsWith("/notes/")) {
      const id = path.slice(7);
      const denied = await authorize(
        req,
        notes,
        req.method === "GET" ? "view" : "edit",
        id,
      );
      if (denied) return denied;
      return new Response(`note ${id}`);
    }
    if (path.startsWith("/account")) {
      return compose(
        [requireAuth()],
        () => new Response("account of " + currentUser(req)),
      )(req);
    }
    return new Response("public " + (currentUser(req) ?? "anonymous"));
  };
  return { handler: compose([idm], route), events, calls };
}
