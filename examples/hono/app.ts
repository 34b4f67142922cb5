/**
 * A Hono app whose routes are guarded by portcullis middleware through the
 * Hono adapter: register, log in, who am I, log out (JSON). The session
 * travels as a Bearer token or as the `__Host-session` cookie.
 *
 * - `POST /register` `{email, password}`: 201 `{subject, token, expiresAt}`
 *   and the session cookie; 409 when the email is taken; 400 for input the
 *   password or email rules refuse.
 * - `POST /login`: 200 as above; 401 for any wrong email or password; 429
 *   after 10 attempts for one email in 15 minutes.
 * - `GET /me` (behind `requireAuth()`): `{subject, email}`, else 401.
 * - `POST /logout` (behind `requireAuth()`): 204, session revoked.
 *
 * @module
 */
import { Hono } from "hono";
import {
  AuthError,
  type CredentialStore,
  currentUser,
  errorResponse,
  identityMiddleware,
  type KeyValueStore,
  normalizeEmail,
  PasswordAuthenticator,
  type PasswordHasher,
  requireAuth,
  type SessionManager,
  signIn,
  signOut,
} from "@portcullis/auth";
import { honoMiddleware } from "@portcullis/auth/adapters/hono";

/** What {@linkcode createHonoApp} needs. */
export interface HonoAppOptions {
  /** Sessions: the signing secret and the revocation store. */
  sessions: SessionManager;
  /** Where users and their password hashes live. */
  credentials: CredentialStore;
  /** Where the login attempts per email are counted. */
  kv: KeyValueStore;
  /** The public origin; unsafe cross-site requests get 403. */
  appOrigin: string;
  /** Default: PBKDF2-SHA256 at 600000 iterations. */
  hasher?: PasswordHasher;
}

/** At most this many login attempts per email in the window. */
export const LOGIN_LIMIT = { max: 10, windowSeconds: 15 * 60 };

/**
 * Builds the Hono app.
 *
 * @param options See {@linkcode HonoAppOptions}.
 * @returns The app; serve `app.fetch`.
 */
export function createHonoApp(options: HonoAppOptions): Hono {
  const auth = new PasswordAuthenticator({
    credentials: options.credentials,
    hasher: options.hasher,
  });
  const app = new Hono();
  // Identity on every route; unsafe cross-site requests answer 403.
  app.use(
    "*",
    honoMiddleware(identityMiddleware(options.sessions, {
      crossOrigin: { appOrigin: options.appOrigin },
    })),
  );

  const started = async (req: Request, subject: string, status: 200 | 201) => {
    const { token, expiresAt, setCookie } = await signIn(req, subject);
    const res = Response.json({ subject, token, expiresAt }, { status });
    if (setCookie) res.headers.append("set-cookie", setCookie);
    return res;
  };

  app.post("/register", async (c) => {
    const input = await credentialsOf(c.req.raw);
    if (input === null) return badRequest(c.req.raw);
    let result;
    try {
      result = await auth.register(input.email, input.password);
    } catch (error) {
      if (
        error instanceof AuthError &&
        (error.code === "INVALID_EMAIL" || error.code === "INVALID_PASSWORD")
      ) {
        return errorResponse(c.req.raw, 400, "invalid_input", error.message);
      }
      throw error;
    }
    if (result.kind === "created") {
      return started(c.req.raw, result.subject, 201);
    }
    return errorResponse(c.req.raw, 409, "email_taken", "Email taken");
  });

  app.post("/login", async (c) => {
    const input = await credentialsOf(c.req.raw);
    if (input === null) return badRequest(c.req.raw);
    if (await tooManyAttempts(options.kv, input.email)) {
      return errorResponse(c.req.raw, 429, "too_many_requests", "Try later", {
        "retry-after": String(LOGIN_LIMIT.windowSeconds),
      });
    }
    const subject = await auth.authenticate(input.email, input.password);
    if (subject === null) {
      return errorResponse(
        c.req.raw,
        401,
        "invalid_credentials",
        "Wrong email or password",
      );
    }
    return started(c.req.raw, subject, 200);
  });

  app.get("/me", honoMiddleware(requireAuth()), async (c) => {
    const subject = currentUser(c.req.raw)!;
    const user = await options.credentials.findById(subject);
    return c.json({ subject, email: user?.email ?? null });
  });

  app.post("/logout", honoMiddleware(requireAuth()), async (c) => {
    const { clearCookie } = await signOut(c.req.raw);
    const res = new Response(null, { status: 204 });
    if (clearCookie) res.headers.append("set-cookie", clearCookie);
    return res;
  });

  app.onError((error, c) => {
    if (error instanceof AuthError && error.code === "STORE_UNAVAILABLE") {
      return errorResponse(c.req.raw, 503, "unavailable", "Try again shortly");
    }
    console.error(`${c.req.method} ${c.req.path} failed`);
    return errorResponse(c.req.raw, 500, "internal", "Something went wrong");
  });
  return app;
}

async function credentialsOf(
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
  const [value] = await kv.getMany([key]);
  const count = Number(value ?? 0) + 1;
  await kv.put(key, String(count), { ttlSeconds: windowSeconds });
  return count > max;
}
