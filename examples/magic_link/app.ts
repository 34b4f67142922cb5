/**
 * Magic-link sign-in: a one-time token by email instead of a password. The
 * credential check is "this person can read mail sent to this address";
 * after it, the session is started with `signIn`, exactly as the password
 * flow does, so cookies, Bearer tokens, revocation and the gates are the same.
 *
 * Routes: `GET /` (the form, or who is signed in), `POST /magic-link`
 * (`{email}`: mails a link when the address belongs to a user; the answer is
 * the same either way), `GET /magic-link/callback?token=` (a confirmation
 * page: mail scanners that prefetch links must not consume the token),
 * `POST /magic-link/callback` (consumes it and signs in), `POST /logout`,
 * `GET /api/me`.
 *
 * @module
 */
import {
  compose,
  type CredentialStore,
  currentUser,
  errorResponse,
  identityMiddleware,
  type KeyValueStore,
  normalizeEmail,
  OneTimeTokens,
  requireAuthenticated,
  type SessionManager,
  signIn,
  signOut,
  type VerificationTokenStore,
} from "@portcullis/auth";
import type { Mailer } from "../app/mailer.ts";
import { readBody } from "../app/request_body.ts";
import { json, page, redirect, tooManyRequests } from "../app/respond.ts";
import { type Limit, RateLimiter } from "../app/rate_limit.ts";
import { html } from "../app/views/html.ts";
import { layout } from "../app/views/auth/layout.ts";

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
  /** The client's address for the per-address limit; default one shared bucket. */
  clientAddress?: (req: Request, ...rest: unknown[]) => string | null;
  /** The public origin links are built from. */
  appOrigin: string;
  /** The clock, in unix milliseconds. */
  now?: () => number;
  /** Whether cookies are Secure and `__Host-` prefixed; default `true`. */
  cookieSecure?: boolean;
}

/** At most this many link requests per email, and per client address, an hour (SECURITY.md item 46). */
export const MAGIC_LINK_LIMITS = {
  perEmail: { max: 5, windowSeconds: 3600 },
  perAddress: { max: 30, windowSeconds: 3600 },
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
  const limiter = new RateLimiter(deps.kv, deps.now ?? Date.now);
  const currentEmail = async (subject: string) =>
    (await deps.credentials.findById(subject))?.email ?? null;

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
            key: deps.clientAddress?.(req, ...rest) ?? "unknown",
            ...MAGIC_LINK_LIMITS.perAddress,
          },
        ];
        const wait = await limiter.blocked(limits);
        if (wait > 0) return tooManyRequests(req, wait);
        await limiter.hit(limits);
        const user = email === null
          ? null
          : await deps.credentials.findByEmail(email);
        if (user !== null) {
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
        res.headers.set("referrer-policy", "no-referrer");
        return res;
      }
      case "POST /magic-link/callback": {
        const body = await readBody(req);
        const redeemed = body === null ? null : await links.redeem(
          body.fields.token ?? "",
          MAGIC_LINK_PURPOSE,
          { currentEmail },
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
        const { clearCookie } = await signOut(req);
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
  return async (req, ...rest) => await handler(req, ...rest);
}
