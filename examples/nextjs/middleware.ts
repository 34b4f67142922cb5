// Runs on the edge runtime before every route: unsafe cross-origin requests
// get 403, and the app's own protected pages need a validly signed session
// (303 to /login for a browser, 401 for an API client). It cannot see
// revocations: the Node side (lib/auth.ts) checks them on every use.
import { type NextRequest, NextResponse } from "next/server";
import {
  identityMiddleware,
  SecretProvider,
  SessionManager,
} from "@portcullis/auth";
import { edgeGate } from "@portcullis/next";

const appOrigin = process.env.APP_ORIGIN ?? "http://localhost:3000";
// Stateless: the signature and expiry only. Revocations live on the Node side.
const sessions = new SessionManager({
  secret: SecretProvider.fromValue(process.env.AUTH_SECRET ?? ""),
  store: null,
});
const gate = edgeGate(
  identityMiddleware(sessions, {
    cookie: { secure: appOrigin.startsWith("https:") },
    crossOrigin: { appOrigin },
  }),
  { protect: ["/dashboard"] },
);

export function middleware(req: NextRequest): Promise<Response> {
  return gate(req, () => NextResponse.next());
}

export const config = {
  // Every path but Next's own static files.
  matcher: ["/((?!_next/static|_next/image|favicon.ico).*)"],
};
