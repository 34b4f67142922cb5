/**
 * Identity for Next.js route handlers, server components and server
 * actions, on the Node runtime, with revocations checked.
 *
 * @module
 */
import {
  compose,
  type CredentialStore,
  currentIdentity,
  type Identity,
  type Middleware,
} from "@portcullis/auth";

/** Options of {@linkcode nextAuth}. */
export interface NextAuthOptions {
  /**
   * Next's `headers` from `next/headers`: how components and actions, which
   * get no `Request`, read the cookie and the `Authorization` header.
   */
  headers: () => Promise<Headers> | Headers;
  /**
   * The public origin (`https://app.example`), the one `identityMiddleware`
   * checks unsafe requests against: component and action lookups are
   * made on it.
   */
  appOrigin: string;
  /**
   * Where {@linkcode NextAuth.user} finds the signed-in user: a credential
   * store, such as `flows.context.credentials` of `@portcullis/accounts`.
   */
  users?: Pick<CredentialStore, "findById">;
}

/** The signed-in user, as {@linkcode NextAuth.user} answers it (no password hash). */
export interface SignedInUser {
  /** The subject id. */
  id: string;
  /** The account's email address. */
  email: string;
  /** Whether the address is verified. */
  verified: boolean;
  /** The session's identity (its expiry, the operator of an impersonation). */
  identity: Identity;
}

/** A route handler: Next passes the request and `{ params }`. */
export type RouteHandler<C> = (
  req: Request,
  context: C,
) => Response | Promise<Response>;

/** Thrown by {@linkcode NextAuth.action} for a cross-origin call. */
export class CrossOriginActionError extends Error {
  /**
   * Makes the error.
   *
   * @param message What was refused.
   */
  constructor(message = "Cross-origin server action refused") {
    super(message);
    this.name = "CrossOriginActionError";
  }
}

/** What {@linkcode nextAuth} gives an app. */
export interface NextAuth {
  /**
   * Wraps a route handler: `identityMiddleware` runs first (identity,
   * revocation check, 403 for an unsafe cross-origin request), then the
   * gates in order, then the handler. `currentUser(req)`, `authorize(req, …)`,
   * `signIn(req, …)` and `signOut(req)` work on its `req`.
   *
   * @param handler The route handler.
   * @param gates Portcullis middleware to run before it (`requireAuth()`).
   * @returns The handler to export as `GET`, `POST`, ….
   */
  route<C>(
    handler: RouteHandler<C>,
    ...gates: Middleware<[C]>[]
  ): (req: Request, context: C) => Promise<Response>;
  /**
   * The identity of the request being rendered, for server components:
   * read from `headers()`, revocations checked. `null` when anonymous,
   * signed out, or when the store could not tell (fail closed).
   *
   * @returns The identity, or `null`.
   */
  identity(): Promise<Identity | null>;
  /**
   * The identity for a server action, after the cross-origin check an
   * unsafe request gets: call it first in every action.
   *
   * @returns The identity, or `null` when anonymous.
   * @throws {CrossOriginActionError} When the action was posted from another
   * origin.
   */
  action(): Promise<Identity | null>;
  /**
   * The signed-in user of the request being rendered, for server
   * components: the identity of {@linkcode NextAuth.identity}, then the user
   * record from `users`. `null` when anonymous, signed out, or when the
   * account is gone.
   *
   * @returns The user, or `null`.
   * @throws {TypeError} When `nextAuth` was built without `users`.
   */
  user(): Promise<SignedInUser | null>;
}

/**
 * Builds the Node-side helpers. Resolving again in each component or
 * action is cheap: a token this process verified before resolves without
 * a store round trip while memory can tell its revocation state.
 *
 * @param identify `identityMiddleware(sessions, { crossOrigin: { appOrigin } })`,
 * over sessions whose store holds the revocations.
 * @param options See {@linkcode NextAuthOptions}.
 * @returns The helpers.
 * @throws {TypeError} When `appOrigin` is not an origin.
 *
 * @example Usage
 * ```ts ignore
 * // lib/auth.ts
 * import { headers } from "next/headers";
 * import { nextAuth } from "@portcullis/next";
 * const appOrigin = process.env.APP_ORIGIN!;
 * export const auth = nextAuth(
 *   identityMiddleware(sessions, { crossOrigin: { appOrigin } }),
 *   { headers, appOrigin },
 * );
 *
 * // app/dashboard/page.tsx
 * const me = await auth.identity();
 * if (me === null) redirect("/login");
 *
 * // With `users: flows.context.credentials` in the options:
 * const user = await auth.user(); // { id, email, verified, identity } or null
 * ```
 */
export function nextAuth(
  identify: Middleware,
  options: NextAuthOptions,
): NextAuth {
  const { headers, appOrigin: origin } = options;
  let appOrigin: string | null = null;
  try {
    appOrigin = new URL(origin).origin;
  } catch {
    // reported below
  }
  if (appOrigin === null || appOrigin !== origin.replace(/\/$/, "")) {
    throw new TypeError(`appOrigin must be an origin: received "${origin}"`);
  }

  async function lookup(method: "GET" | "POST"): Promise<Identity | null> {
    const req = new Request(`${appOrigin}/`, {
      method,
      headers: new Headers(await headers()),
    });
    let found: Identity | null | undefined;
    await identify(req, (r = req) => {
      found = currentIdentity(r);
      return Promise.resolve(new Response(null, { status: 204 }));
    });
    if (found === undefined) {
      if (method === "POST") throw new CrossOriginActionError();
      return null;
    }
    return found;
  }

  return {
    route<C>(handler: RouteHandler<C>, ...gates: Middleware<[C]>[]) {
      const run = compose<[C]>([identify, ...gates], handler);
      return (req: Request, context: C) => Promise.resolve(run(req, context));
    },
    identity: () => lookup("GET"),
    action: () => lookup("POST"),
    async user() {
      if (options.users === undefined) {
        throw new TypeError(
          "nextAuth() needs users to answer user(): pass users, for example flows.context.credentials",
        );
      }
      const identity = await lookup("GET");
      if (identity === null) return null;
      const record = await options.users.findById(identity.subject);
      return record === null ? null : {
        id: record.id,
        email: record.email,
        verified: record.verifiedAt > 0,
        identity,
      };
    },
  };
}
