/**
 * The example's routes, as a Web-standard handler: register, log in, who am
 * I, log out. JSON in and out; the session travels as a Bearer token or as
 * the `__Host-session` cookie, whichever the client keeps.
 *
 * - `POST /register` `{email, password}`: 201 `{subject, token, expiresAt}`
 *   and the session cookie; 409 when the email is taken; 400 with the
 *   reason for input the password or email rules refuse.
 * - `POST /login` `{email, password}`: 200 as above; 401 for any wrong
 *   email or password; 429 with `Retry-After` when the library's
 *   `LoginThrottle` holds the account or the address back.
 * - `GET /me`: 200 `{subject, email}`; 401 without a valid session.
 * - `POST /logout`: 204, the session revoked and the cookie cleared.
 *
 * @module
 */
import {
  AuthError,
  compose,
  type CredentialStore,
  currentUser,
  errorResponse,
  identityMiddleware,
  type KeyValueStore,
  PasswordAuthenticator,
  type PasswordHasher,
  requireAuthenticated,
  type SessionManager,
  signIn,
  signOut,
} from "@portcullis/auth";
import { LoginThrottle } from "@portcullis/auth/throttle";

/** What {@linkcode createApp} needs. */
export interface AppOptions {
  /** Sessions: the signing secret and the revocation store. */
  sessions: SessionManager;
  /** Where users and their password hashes live. */
  credentials: CredentialStore;
  /** Where failed logins are counted (per account, address and pair). */
  kv: KeyValueStore;
  /** The public origin (`https://…`); unsafe cross-site requests get 403. */
  appOrigin: string;
  /** Default: PBKDF2-SHA256 at 600000 iterations. */
  hasher?: PasswordHasher;
  /**
   * The client's address, for the per-address login counters: read what
   * your platform sets, never a header a client can set. Default: one
   * shared bucket.
   */
  clientAddress?: (req: Request, ...rest: unknown[]) => string | null;
}

/**
 * Builds the handler.
 *
 * @param options See {@linkcode AppOptions}.
 * @returns A handler for `Deno.serve`, `Bun.serve`, a Worker or an Edge
 * Function.
 */
export function createApp(
  options: AppOptions,
): (req: Request, ...rest: unknown[]) => Promise<Response> {
  const auth = new PasswordAuthenticator({
    credentials: options.credentials,
    hasher: options.hasher,
    throttle: new LoginThrottle({ store: options.kv }),
  });

  const session = (
    started: { token: string; expiresAt: number; setCookie: string | null },
    subject: string,
    status: number,
  ) => {
    const { token, expiresAt, setCookie } = started;
    const res = Response.json({ subject, token, expiresAt }, { status });
    if (setCookie) res.headers.append("set-cookie", setCookie);
    res.headers.set("cache-control", "no-store");
    return res;
  };

  const routes = async (
    req: Request,
    ...rest: unknown[]
  ): Promise<Response> => {
    const { pathname } = new URL(req.url);
    switch (`${req.method} ${pathname}`) {
      case "POST /register": {
        const input = await readCredentials(req);
        if (input === null) return badRequest(req);
        const result = await auth.register(input.email, input.password);
        if (result.kind === "emailTaken") {
          return errorResponse(req, 409, "email_taken", "Email taken");
        }
        if (result.kind === "rejected") {
          return errorResponse(req, 400, "invalid_input", result.reason);
        }
        const started = await signIn(req, result.subject);
        return session(started, result.subject, 201);
      }
      case "POST /login": {
        const input = await readCredentials(req);
        if (input === null) return badRequest(req);
        const address = options.clientAddress?.(req, ...rest) ?? "unknown";
        const login = await auth.login(input.email, input.password, {
          address,
        });
        if (login.kind === "throttled") {
          return errorResponse(req, 429, "too_many_requests", "Try later", {
            "retry-after": String(login.retryAfterSeconds),
          });
        }
        // signIn answers null when the password changed meanwhile.
        const started = login.kind === "ok" ? await signIn(req, login) : null;
        if (login.kind !== "ok" || started === null) {
          return errorResponse(
            req,
            401,
            "invalid_credentials",
            "Wrong email or password",
          );
        }
        return session(started, login.subject, 200);
      }
      case "GET /me": {
        const denied = requireAuthenticated(req);
        if (denied) return denied;
        const subject = currentUser(req)!;
        const user = await options.credentials.findById(subject);
        return Response.json({ subject, email: user?.email ?? null }, {
          headers: { "cache-control": "no-store" },
        });
      }
      case "POST /logout": {
        const denied = requireAuthenticated(req);
        if (denied) return denied;
        const { clearCookie } = await signOut(req);
        const res = new Response(null, { status: 204 });
        if (clearCookie) res.headers.append("set-cookie", clearCookie);
        return res;
      }
    }
    return errorResponse(req, 404, "not_found", "Nothing here");
  };

  const handler = compose<unknown[]>([
    identityMiddleware(options.sessions, {
      crossOrigin: { appOrigin: options.appOrigin },
    }),
  ], routes);
  return async (req, ...rest) => {
    try {
      return await handler(req, ...rest);
    } catch (error) {
      if (error instanceof AuthError && error.code === "STORE_UNAVAILABLE") {
        return errorResponse(req, 503, "unavailable", "Try again shortly", {
          "retry-after": "5",
        });
      }
      console.error(`${req.method} ${new URL(req.url).pathname} failed`);
      return errorResponse(req, 500, "internal", "Something went wrong");
    }
  };
}

async function readCredentials(
  req: Request,
): Promise<{ email: string; password: string } | null> {
  try {
    const body = await req.json();
    return typeof body?.email === "string" &&
        typeof body?.password === "string"
      ? { email: body.email, password: body.password }
      : null;
  } catch {
    return null;
  }
}

function badRequest(req: Request): Response {
  return errorResponse(req, 400, "bad_request", "Send JSON {email, password}");
}
