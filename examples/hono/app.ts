/**
 * A Hono app whose routes are guarded by portcullis middleware through the
 * Hono adapter: register, log in, who am I, log out (JSON). The session
 * travels as a Bearer token or as the `__Host-session` cookie.
 *
 * - `POST /register` `{email, password}`: 201 `{subject, token, expiresAt}`
 *   and the session cookie; 409 when the email is taken; 400 for input the
 *   password or email rules refuse.
 * - `POST /login`: 200 as above; 401 for any wrong email or password; 429
 *   with `Retry-After` while the library's `LoginThrottle` holds back the
 *   account or the address.
 * - `GET /me` (behind `requireAuth()`): `{subject, email}`, else 401.
 * - `POST /logout` (behind `requireAuth()`): 204, session revoked.
 *
 * @module
 */
import { Hono } from "hono";
import {
  AuthError,
  type CredentialStore,
  errorResponse,
  identityMiddleware,
  type KeyValueStore,
  PasswordAuthenticator,
  type PasswordHasher,
  requireAuth,
  type SessionManager,
  signIn,
  signOut,
} from "@portcullis/auth";
import {
  honoMiddleware,
  type PortcullisVariables,
} from "@portcullis/auth/adapters/hono";
import { LoginThrottle } from "@portcullis/auth/throttle";

/** What {@linkcode createHonoApp} needs. */
export interface HonoAppOptions {
  /** Sessions: the signing secret and the revocation store. */
  sessions: SessionManager;
  /** Where users and their password hashes live. */
  credentials: CredentialStore;
  /** Where failed logins are counted (per account, address and pair). */
  kv: KeyValueStore;
  /** The public origin; unsafe cross-site requests get 403. */
  appOrigin: string;
  /** Default: PBKDF2-SHA256 at 600000 iterations. */
  hasher?: PasswordHasher;
  /**
   * The client's address from Hono's context, for the per-address login
   * counters (on Deno, `c.env.remoteAddr.hostname`). Default: one bucket.
   */
  clientAddress?: (req: Request, env: unknown) => string | null;
}

/**
 * Builds the Hono app.
 *
 * @param options See {@linkcode HonoAppOptions}.
 * @returns The app; serve `app.fetch`.
 */
export function createHonoApp(
  options: HonoAppOptions,
): Hono<{ Variables: PortcullisVariables }> {
  const auth = new PasswordAuthenticator({
    credentials: options.credentials,
    hasher: options.hasher,
    throttle: new LoginThrottle({ store: options.kv }),
  });
  // c.get("user") and c.get("identity"), typed, on every route below.
  const app = new Hono<{ Variables: PortcullisVariables }>();
  // Identity on every route; unsafe cross-site requests answer 403.
  app.use(
    "*",
    honoMiddleware(identityMiddleware(options.sessions, {
      crossOrigin: { appOrigin: options.appOrigin },
    })),
  );

  const answer = (
    session: { token: string; expiresAt: number; setCookie: string | null },
    subject: string,
    status: 200 | 201,
  ) => {
    const { token, expiresAt, setCookie } = session;
    const res = Response.json({ subject, token, expiresAt }, { status });
    if (setCookie) res.headers.append("set-cookie", setCookie);
    return res;
  };

  app.post("/register", async (c) => {
    const input = await credentialsOf(c.req.raw);
    if (input === null) return badRequest(c.req.raw);
    const result = await auth.register(input.email, input.password);
    if (result.kind === "emailTaken") {
      return errorResponse(c.req.raw, 409, "email_taken", "Email taken");
    }
    if (result.kind === "rejected") {
      return errorResponse(c.req.raw, 400, "invalid_input", result.reason);
    }
    const session = await signIn(c.req.raw, result.subject);
    return answer(session, result.subject, 201);
  });

  app.post("/login", async (c) => {
    const input = await credentialsOf(c.req.raw);
    if (input === null) return badRequest(c.req.raw);
    const address = options.clientAddress?.(c.req.raw, c.env) ?? "unknown";
    const login = await auth.login(input.email, input.password, { address });
    if (login.kind === "throttled") {
      return errorResponse(c.req.raw, 429, "too_many_requests", "Try later", {
        "retry-after": String(login.retryAfterSeconds),
      });
    }
    // signIn answers null when the password changed meanwhile.
    const session = login.kind === "ok" ? await signIn(c.req.raw, login) : null;
    if (login.kind !== "ok" || session === null) {
      return errorResponse(
        c.req.raw,
        401,
        "invalid_credentials",
        "Wrong email or password",
      );
    }
    return answer(session, login.subject, 200);
  });

  app.get("/me", honoMiddleware(requireAuth()), async (c) => {
    const subject = c.get("user")!; // requireAuth() let only a user through
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
