/**
 * portcullis for Next.js (App Router).
 *
 * - {@linkcode edgeGate} runs in `middleware.ts` on the edge runtime:
 *   cross-origin protection for every unsafe request, and a signed session
 *   required on the paths you protect.
 * - {@linkcode nextAuth} runs on the Node runtime: route handlers wrapped
 *   with `identityMiddleware`, and the identity of server components and
 *   server actions read through `headers()`, revocations checked.
 *
 * The edge runtime cannot reach a store on the Node side, so revocation
 * (logout) is enforced where the identity is used: every route, page and
 * action resolves again with the store.
 *
 * No `next` import: Next's functions are passed in, so this package loads
 * nothing but `@portcullis/auth`.
 *
 * @example Usage
 * ```ts ignore
 * import { headers } from "next/headers";
 * import { currentUser, identityMiddleware, requireAuth } from "@portcullis/auth";
 * import { nextAuth } from "@portcullis/next";
 *
 * const appOrigin = "https://app.example";
 * const auth = nextAuth(
 *   identityMiddleware(sessions, { crossOrigin: { appOrigin } }),
 *   { headers, appOrigin },
 * );
 * export const GET = auth.route(
 *   (req) => Response.json({ subject: currentUser(req) }),
 *   requireAuth(),
 * );
 * ```
 *
 * @module
 */
export { type EdgeGate, edgeGate, type EdgeGateOptions } from "./edge_gate.ts";
export {
  CrossOriginActionError,
  type NextAuth,
  nextAuth,
  type NextAuthOptions,
  type RouteHandler,
  type SignedInUser,
} from "./next_auth.ts";
// The core's types these signatures name, so that this entry's
// documentation is whole.
export type { Identity, Middleware } from "@portcullis/auth";
export type { Next, RequireAuthOptions } from "@portcullis/auth/http";
