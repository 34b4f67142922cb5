/**
 * Magic-link sign-in: a one-time token by email instead of a password. The
 * credential check is "this person can read mail sent to this address";
 * after it, the session is started with `signIn`, exactly as the password
 * flow does, so cookies, Bearer tokens, revocation and the gates are the same.
 *
 * Routes: `GET /` (the form, or who is signed in), `POST /magic-link`
 * (`{email}`: mails a link when the address belongs to a user whose address
 * is proven (verified); the answer is
 * the same either way, and is sent before the lookup and the mail, which run
 * in the background), `GET /magic-link/callback?token=` (a confirmation
 * page: mail scanners that prefetch links must not consume the token),
 * `POST /magic-link/callback` (consumes it and signs in; limited per
 * address), `POST /logout` (503 with `Retry-After`, cookie kept, when the
 * session store is down), `GET /api/me`.
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
  requireAuthenticated,
  type SessionManager,
  signIn,
  signOut,
} from "@portcullis/auth";
import {
  OneTimeTokens,
  type VerificationTokenStore,
} from "@portcullis/auth/verification";
import { type Limit, SlidingWindowLimiter } from "@portcullis/auth/throttle";
import type { Mailer } from "./mail.ts";
import {
  html,
  json,
  layout,
  page,
  readBody,
  redirect,
  tooManyRequests,
} from "./http.ts";

/** The purpose magic-link tokens are minted for. */
export const MAGIC_LINK_PURPOSE = "magic-link";
/** How long a magic link works: 15 minutes. */
export const MAGIC_LINK_TTL_MS = 15 * 60 * 1000;

/** What {@linkcode createMagicLinkApp} needs. */
export interface MagicLinkDeps {
  /** Sessions. */
  sessions: SessionManager;
  /** Users (the same store the password app uses). */
  credentials: CredentialStore;
  /** Single-use token hashes, with an atomic consume. */
  tokens: VerificationTokenStore;
  /** Sends mail. */
  mailer: Mailer;
  /** Where the request limits are counted (never process memory in production). */
  kv: KeyValueStore;
  /**
   * The client's address for the per-address limits; default one shared
   * bucket for every client (logged once at start). Behind a proxy, read the
   * header your platform sets; never one a client can set.
   */
  clientAddress?: (req: Request, ...rest: unknown[]) => string | null;
  /**
   * Keeps background work (the lookup and the mail after `POST /magic-link`
   * has answered) alive after the response, for runtimes that stop a
   * request's work when it answers: on Cloudflare Workers,
   * `(task, _req, _env, ctx) => (ctx as ExecutionContext).waitUntil(task)`.
   * Default: the task runs on unattended (Deno, Bun, Node). The task never
   * rejects; its errors are logged.
   */
  waitUntil?: (task: Promise<void>, req: Request, ...rest: unknown[]) => void;
  /** Where operational messages go (mail failures, warnings); default `console.log`. */
  log?: (line: string) => void;
  /** The public origin links are built from. */
  appOrigin: string;
  /** The clock, in unix milliseconds. */
  now?: () => number;
  /** Whether cookies are Secure and `__Host-` prefixed; default `true`. */
  cookieSecure?: boolean;
}

/** At most this many link requests per email, and per client address, an hour, so nobody can flood a mailbox. */
export const MAGIC_LINK_LIMITS = {
  perEmail: { max: 5, windowSeconds: 3600 },
  perAddress: { max: 30, windowSeconds: 3600 },
  /** Redemptions (`POST /magic-link/callback`) per client address. */
  redeemPerAddress: { max: 30, windowSeconds: 15 * 60 },
};

const SENT =
  "If that address belongs to an account, a sign-in link is on its way. It works once, for 15 minutes.";

/**
 * Builds the magic-link app.
 *
 * @param deps The stores, the mailer and the origin.
 * @returns A Web-standard handler.
 */
export function createMagicLinkApp(
  deps: MagicLinkDeps,
): (req: Request, ...rest: unknown[]) => Promise<Response> {
  const links = new OneTimeTokens({
    store: deps.tokens,
    ttlMs: MAGIC_LINK_TTL_MS,
    now: deps.now,
  });
  const limiter = new SlidingWindowLimiter(deps.kv, { now: deps.now });
  const log = deps.log ?? console.log;
  if (deps.clientAddress === undefined) {
    log(
      "warning: clientAddress is not set: per-address rate limits put every client in one shared bucket (one client can then throttle everyone). Pass clientAddress, reading the address your platform sets.",
    );
  }
  const addressOf = (req: Request, rest: unknown[]) =>
    deps.clientAddress?.(req, ...rest) ?? "unknown";
  const mailLink = async (email: string): Promise<void> => {
    const user = await deps.credentials.findByEmail(email);
    // An address never proven gets no link: this example does not prove
    // addresses (the reference app's magic-link module does, by the rules
    // of its verification link), and signing the mailbox's owner in to an
    // account someone else registered would leave that party's password
    // working on it (pre-account hijacking, docs/security.md).
    if (user === null || user.verifiedAt <= 0) return;
    const token = await links.issue({
      subject: user.id,
      email: user.email,
      purpose: MAGIC_LINK_PURPOSE,
    });
    const link = new URL("/magic-link/callback", deps.appOrigin);
    link.searchParams.set("token", token);
    await deps.mailer.send({
      to: user.email,
      subject: "Your sign-in link",
      view: String(
        html`<p><a href="${link.href}">Sign in</a> (works once, for 15 minutes).</p>`,
      ),
      text: `Sign in (works once, for 15 minutes):\n\n${link.href}\n`,
    });
  };
  const currentEmail = async (subject: string) =>
    (await deps.credentials.findById(subject))?.email ?? null;
  /** The subject's email while its address is proven, else `null`. */
  const currentProvenEmail = async (subject: string) => {
    const user = await deps.credentials.findById(subject);
    return user !== null && user.verifiedAt > 0 ? user.email : null;
  };

  const router = async (
    req: Request,
    ...rest: unknown[]
  ): Promise<Response> => {
    const url = new URL(req.url);
    const route = `${req.method} ${url.pathname}`;
    switch (route) {
      case "GET /": {
        const subject = currentUser(req);
        const email = subject === null ? null : await currentEmail(subject);
        return page(layout({
          title: "Magic link",
          email,
          body: email === null
            ? html`
              <h1>Sign in by email</h1>
              <form method="post" action="/magic-link">
                <label for="email">Email</label>
                <input id="email" name="email" type="email" required>
                <p><button type="submit">Email me a sign-in link</button></p>
              </form>
            `
            : html`
              <h1>Signed in</h1>
              <p>You are <strong id="email">${email}</strong>.</p>
            `,
        }));
      }
      case "POST /magic-link": {
        const body = await readBody(req);
        if (body === null) {
          return errorResponse(req, 400, "bad_request", "Unreadable body");
        }
        let email: string | null;
        try {
          email = normalizeEmail(body.fields.email ?? "");
        } catch {
          email = null; // answered like an unknown address
        }
        const limits: Limit[] = [
          {
            name: "magic-link-email",
            key: email ?? "invalid",
            ...MAGIC_LINK_LIMITS.perEmail,
          },
          {
            name: "magic-link-address",
            key: addressOf(req, rest),
            ...MAGIC_LINK_LIMITS.perAddress,
          },
        ];
        const wait = await limiter.take(limits);
        if (wait > 0) return tooManyRequests(req, wait);
        if (email !== null) {
          // The lookup, the token and the mail run after the answer, which
          // is therefore the same, and as fast, for every address; a mail
          // failure is logged, never answered.
          const task = mailLink(email).catch((error) =>
            log(`magic link: mail not sent: ${(error as Error)?.message}`)
          );
          deps.waitUntil?.(task, req, ...rest);
        }
        return body.kind === "form"
          ? page(
            layout({
              title: "Check your inbox",
              email: null,
              body: html`<p id="sent">${SENT}</p>`,
            }),
            202,
          )
          : json({ status: "sent", message: SENT }, 202);
      }
      case "GET /magic-link/callback": {
        const token = url.searchParams.get("token") ?? "";
        const res = page(layout({
          title: "Sign in",
          email: null,
          body: html`
            <h1>Sign in</h1>
            <form method="post" action="/magic-link/callback">
              <input type="hidden" name="token" value="${token}">
              <button type="submit">Sign in</button>
            </form>
          `,
        }));
        // strict-origin, not no-referrer: the token stays out of any
        // Referer (only the origin is sent), and the form's POST carries
        // this origin in Origin rather than "null", which the cross-origin
        // check refuses where the browser sends no Sec-Fetch-Site.
        res.headers.set("referrer-policy", "strict-origin");
        return res;
      }
      case "POST /magic-link/callback": {
        const wait = await limiter.take([{
          name: "magic-link-redeem-address",
          key: addressOf(req, rest),
          ...MAGIC_LINK_LIMITS.redeemPerAddress,
        }]);
        if (wait > 0) return tooManyRequests(req, wait);
        const body = await readBody(req);
        const redeemed = body === null ? null : await links.redeem(
          body.fields.token ?? "",
          MAGIC_LINK_PURPOSE,
          { currentEmail: currentProvenEmail },
        );
        if (redeemed === null) {
          return errorResponse(
            req,
            400,
            "invalid_link",
            "This sign-in link is unknown, used or expired",
          );
        }
        const session = await signIn(req, redeemed.subject);
        return body!.kind === "form"
          ? redirect("/", [session.setCookie])
          : json({ token: session.token, expiresAt: session.expiresAt });
      }
      case "POST /logout": {
        // A session that could not be checked or revoked is not reported
        // as ended: 503, and the cookie stays.
        const denied = requireAuthenticated(req);
        if (denied?.status === 503) return denied;
        let clearCookie: string | null;
        try {
          ({ clearCookie } = await signOut(req));
        } catch (error) {
          if (isStoreUnavailable(error)) return unavailable(req);
          throw error;
        }
        return req.headers.has("authorization")
          ? new Response(null, { status: 204 })
          : redirect("/", [clearCookie]);
      }
      case "GET /api/me": {
        const denied = requireAuthenticated(req);
        if (denied) return denied;
        const subject = currentUser(req)!;
        return json({ subject, email: await currentEmail(subject) });
      }
    }
    return errorResponse(req, 404, "not_found", "Nothing here");
  };

  const handler = compose<unknown[]>([
    identityMiddleware(deps.sessions, {
      cookie: { secure: deps.cookieSecure ?? true },
      crossOrigin: { appOrigin: deps.appOrigin },
    }),
  ], router);
  return async (req, ...rest) => {
    try {
      return await handler(req, ...rest);
    } catch (error) {
      if (isStoreUnavailable(error)) {
        log(`store unavailable: ${(error as Error).message}`);
        return unavailable(req);
      }
      log(
        `unexpected error on ${req.method} ${new URL(req.url).pathname}: ${
          (error as Error)?.message
        }`,
      );
      return errorResponse(req, 500, "internal", "Something went wrong");
    }
  };
}

function isStoreUnavailable(error: unknown): boolean {
  return error instanceof AuthError && error.code === "STORE_UNAVAILABLE";
}

function unavailable(req: Request): Response {
  return errorResponse(
    req,
    503,
    "unavailable",
    "The service is temporarily unavailable, try again shortly",
    { "retry-after": "5" },
  );
}
