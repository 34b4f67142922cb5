/**
 * The example's routes, as a Web-standard handler: register, log in, who am
 * I, log out. JSON in and out; the session travels as a Bearer token or as
 * the `__Host-session` cookie, whichever the client keeps.
 *
 * - `POST /register` `{email, password}`: 201 `{subject, token, expiresAt}`
 *   and the session cookie; 409 when the email is taken; 400 for input the
 *   password or email rules refuse.
 * - `POST /login` `{email, password}`: 200 as above; 401 for any wrong
 *   email or password; 429 after 10 attempts for one email in 15 minutes.
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
  normalizeEmail,
  PasswordAuthenticator,
  type PasswordHasher,
  requireAuthenticated,
  type SessionManager,
  signIn,
  signOut,
} from "@portcullis/auth";

/** What {@linkcode createApp} needs. */
export interface AppOptions {
  /** Sessions: the signing secret and the revocation store. */
  sessions: SessionManager;
  /** Where users and their password hashes live. */
  credentials: CredentialStore;
  /** Where the login attempts per email are counted. */
  kv: KeyValueStore;
  /** The public origin (`https://…`); unsafe cross-site requests get 403. */
  appOrigin: string;
  /** Default: PBKDF2-SHA256 at 600000 iterations. */
  hasher?: PasswordHasher;
}

/** At most this many login attempts per email in the window. */
export const LOGIN_LIMIT = { max: 10, windowSeconds: 15 * 60 };

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
  });

  const session = async (req: Request, subject: string, status: number) => {
    const { token, expiresAt, setCookie } = await signIn(req, subject);
    const res = Response.json({ subject, token, expiresAt }, { status });
    if (setCookie) res.headers.append("set-cookie", setCookie);
    res.headers.set("cache-control", "no-store");
    return res;
  };

  const routes = async (req: Request): Promise<Response> => {
    const { pathname } = new URL(req.url);
    switch (`${req.method} ${pathname}`) {
      case "POST /register": {
        const input = await readCredentials(req);
        if (input === null) return badRequest(req);
        let result;
        try {
          result = await auth.register(input.email, input.password);
        } catch (error) {
          if (isRefusedInput(error)) {
            return errorResponse(req, 400, "invalid_input", error.message);
          }
          throw error;
        }
        if (result.kind === "created") {
          return await session(req, result.subject, 201);
        }
        if (result.kind === "emailTaken") {
          return errorResponse(req, 409, "email_taken", "Email taken");
        }
        return errorResponse(req, 400, "invalid_input", "Input refused");
      }
      case "POST /login": {
        const input = await readCredentials(req);
        if (input === null) return badRequest(req);
        if (await tooManyAttempts(options.kv, input.email)) {
          return errorResponse(req, 429, "too_many_requests", "Try later", {
            "retry-after": String(LOGIN_LIMIT.windowSeconds),
          });
        }
        const subject = await auth.authenticate(input.email, input.password);
        if (subject === null) {
          return errorResponse(
            req,
            401,
            "invalid_credentials",
            "Wrong email or password",
          );
        }
        return await session(req, subject, 200);
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

function isRefusedInput(error: unknown): error is AuthError {
  return error instanceof AuthError &&
    (error.code === "INVALID_EMAIL" || error.code === "INVALID_PASSWORD");
}

/** Counts one login attempt for the email; true when over the limit. */
async function tooManyAttempts(
  kv: KeyValueStore,
  email: string,
): Promise<boolean> {
  let key: string;
  try {
    key = `login-attempts:${normalizeEmail(email)}`;
  } catch {
    return false; // no account has this address: nothing to guess
  }
  const { max, windowSeconds } = LOGIN_LIMIT;
  if (kv.increment) return (await kv.increment(key, windowSeconds)) > max;
  // Stores without an atomic counter (Workers KV): close enough for a limit.
  const [value] = await kv.getMany([key]);
  const count = Number(value ?? 0) + 1;
  await kv.put(key, String(count), { ttlSeconds: windowSeconds });
  return count > max;
}
