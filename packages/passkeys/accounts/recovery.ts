/**
 * Recovery of an account by a mailed link, for someone who lost their
 * passkey (or never had a password): `POST /passkeys/recover` mails the
 * link, `GET /passkeys/recover/callback` shows a page whose form posts it
 * back (a mail scanner consumes nothing), and `POST
 * /passkeys/recover/callback` redeems it and starts a **recovery session**.
 *
 * A recovery session is no session: it is a cookie signed for this purpose
 * alone, bound to the account, living 15 minutes, whose one use is
 * recorded in the single-use token table. It can do two things: add a
 * passkey (`POST /passkeys/recover/options`, `/passkeys/recover/register`)
 * or set a password (`POST /passkeys/recover/password`). Either ends it:
 * every session of the account is revoked and the browser is signed in
 * afresh. Every other route answers 403 `recovery_only` while the cookie is
 * there (`POST /passkeys/recover/end` drops it), so a recovery never
 * reaches the account's data, settings or deletion.
 *
 * Redeeming the link proves the address: an account never proven is
 * disowned first (everything someone else set up goes, every session
 * ends), by the rules every mailed link follows.
 *
 * @module
 */
import { AuthError, errorResponse } from "@portcullis/auth";
import { OneTimeTokens } from "@portcullis/auth/verification";
import { encodeBase64Url, sha256Hex } from "@portcullis/bytes";
import {
  bodyOrBadRequest,
  currentEmailCheck,
  emit,
  json,
  limit,
  mailTokenLink,
  type ModuleContext,
  proveByLink,
  record,
  redirect,
  render,
  requestMailedLink,
  ShortCookie,
  signInWith,
  strictOrigin,
  tokenFields,
  tooManyRequests,
} from "@portcullis/accounts/plugin";
import { jsonOrBadRequest } from "./json_body.ts";
import type { PasskeysSettings, Recovery } from "./settings.ts";

export type { Recovery };

/** The purpose recovery links are minted for. */
export const RECOVERY_LINK_PURPOSE = "passkey-recovery";
/** How long a recovery link, and the recovery session, work: 15 minutes. */
export const RECOVERY_SECONDS = 15 * 60;
const SESSION_PURPOSE = "passkey-recovery-session";

/** Limits: links per address asked for and per client; redemptions per client. */
export const RECOVERY_LIMITS = {
  perEmail: { max: 5, windowSeconds: 3600 },
  perAddress: { max: 30, windowSeconds: 3600 },
  redeemPerAddress: { max: 30, windowSeconds: 15 * 60 },
};

/**
 * The routes a recovery session may use: its own, the browser module and
 * the stylesheet. Every other route answers 403 `recovery_only`.
 */
const ALLOWED = new Set([
  "GET /passkeys/recover/session",
  "POST /passkeys/recover/options",
  "POST /passkeys/recover/register",
  "POST /passkeys/recover/password",
  "POST /passkeys/recover/end",
  "GET /assets/passkeys.js",
  "GET /style.css",
]);

const SENT =
  "If an account uses that address, a recovery link is on its way. It works once, for 15 minutes.";
const REFUSED =
  "This recovery link is unknown, was already used, or has expired. Ask for a new one.";
const RECOVERY_ONLY =
  "This browser is recovering an account: it can only add a passkey or set a password until it is done (or the recovery is ended)";

/**
 * Makes the recovery's parts for an app.
 *
 * @param ctx The app.
 * @returns The parts.
 */
export function recoveryParts(ctx: ModuleContext): Recovery {
  return {
    links: new OneTimeTokens({
      store: ctx.tokenStore,
      ttlMs: RECOVERY_SECONDS * 1000,
      now: ctx.now,
    }),
    cookie: new ShortCookie("recovery", ctx.cookieSecure),
  };
}

/** A recovery session as its cookie holds it. */
interface RecoveryState {
  subject: string;
  nonce: string;
}

async function readState(
  ctx: ModuleContext,
  recovery: Recovery,
  req: Request,
): Promise<RecoveryState | null> {
  const value = recovery.cookie.read(req);
  if (value === null || value.length > 1024) return null;
  const payload = await ctx.signer(SESSION_PURPOSE).verify(value);
  if (payload === null) return null;
  try {
    const d = JSON.parse(new TextDecoder().decode(payload));
    if (
      typeof d.s !== "string" || typeof d.n !== "string" ||
      typeof d.e !== "number" || d.e * 1000 <= ctx.now()
    ) return null;
    // Still open: not spent, nor ended by the owner (a password change, an
    // email change, signing out everywhere: `cancelRecoveries`).
    const open = await ctx.tokenStore.find(
      await sha256Hex(d.n),
      SESSION_PURPOSE,
    );
    if (open === null || open.subject !== d.s) return null;
    return { subject: d.s, nonce: d.n };
  } catch {
    return null;
  }
}

/**
 * The module's `beforeRoute` part: while a recovery session's cookie is in
 * the request, any route but the recovery's own answers 403
 * `recovery_only`. Costs nothing for a request without the cookie.
 *
 * @param ctx The app.
 * @param recovery The recovery's parts.
 * @returns The hook.
 */
export function recoveryGate(
  ctx: ModuleContext,
  recovery: Recovery,
): (req: Request) => Response | null | Promise<Response | null> {
  return (req) => {
    if (recovery.cookie.read(req) === null) return null;
    const path = new URL(req.url).pathname;
    if (ALLOWED.has(`${req.method} ${path}`)) return null;
    return readState(ctx, recovery, req).then((state) =>
      state === null
        ? null
        : errorResponse(req, 403, "recovery_only", RECOVERY_ONLY)
    );
  };
}

/** `GET /passkeys/recover`: the form that asks for a recovery link. */
export function recoverPage(
  ctx: ModuleContext,
  { views }: PasskeysSettings,
): Response {
  return render(ctx, views.recoverPage({ email: "", error: null }));
}

/**
 * `POST /passkeys/recover` (form or JSON `{email}`): the same answer
 * whether or not the address is registered (form: 303 to `/login` with a
 * flash; JSON: 202 `{}`); the lookup and the mail run after the answer
 * (`requestMailedLink`). Not an address: 422. Limited per address asked
 * for and per client: 429.
 *
 * An account whose address was never proven gets the link too, as a
 * password account never proven gets a reset link: only the address's
 * owner receives it, and redeeming it is the first proof of the address,
 * which disowns the account before the recovery can add anything
 * ({@linkcode redeemRecovery}).
 */
export function requestRecovery(
  ctx: ModuleContext,
  settings: PasskeysSettings,
  req: Request,
): Promise<Response> {
  return requestMailedLink(ctx, req, {
    limit: "passkey-recovery",
    perEmail: RECOVERY_LIMITS.perEmail,
    perAddress: RECOVERY_LIMITS.perAddress,
    sent: SENT,
    invalidForm: ({ email, error }) =>
      settings.views.recoverPage({ email, error }),
    mail: (user) =>
      mailTokenLink(ctx, user, {
        tokens: settings.recovery.links,
        purpose: RECOVERY_LINK_PURPOSE,
        path: "/passkeys/recover/callback",
        view: (data) => settings.views.recoveryEmail(data),
      }),
    what: "recovery",
  });
}

/**
 * `GET /passkeys/recover/callback?token=…`: a page whose form posts the
 * token back; never consumes it. Unknown, used or expired: the 400 page.
 */
export async function confirmRecovery(
  ctx: ModuleContext,
  settings: PasskeysSettings,
  req: Request,
): Promise<Response> {
  const token = new URL(req.url).searchParams.get("token") ?? "";
  const owner = await ownerOf(ctx, settings, token);
  if (owner === null) return refused(ctx, req, false);
  return strictOrigin(render(
    ctx,
    settings.views.recoverConfirmPage({
      token,
      unverified: owner.verifiedAt === 0,
    }),
  ));
}

/**
 * `POST /passkeys/recover/callback` (form or JSON `{token}`): redeems the
 * link once and starts the recovery session (form: 303 to
 * `/passkeys/recover/session`; JSON: 200 `{recovering: true}`), with its
 * cookie. An address never proven is proven here by disowning: every
 * session ends and everything set up on the account goes. Unknown, used,
 * expired or another address's token: 400, nothing changes. Limited per
 * client address: 429.
 */
export async function redeemRecovery(
  ctx: ModuleContext,
  settings: PasskeysSettings,
  req: Request,
): Promise<Response> {
  const wait = await ctx.limiter.take([
    limit(
      "passkey-recovery-redeem",
      ctx.clientAddress(req),
      RECOVERY_LIMITS.redeemPerAddress,
    ),
  ]);
  if (wait > 0) return strictOrigin(tooManyRequests(req, wait));
  const body = await bodyOrBadRequest(req);
  if (body instanceof Response) return strictOrigin(body);
  const form = body.kind !== "json";
  const token = body.fields.token ?? "";
  const owner = await ownerOf(ctx, settings, token);
  if (owner === null) return refused(ctx, req, !form);
  const redeemed = await proveByLink(
    ctx,
    req,
    owner,
    owner.verifiedAt > 0 ? "proven" : "disown",
    () =>
      settings.recovery.links.redeem(
        token,
        RECOVERY_LINK_PURPOSE,
        currentEmailCheck(ctx),
      ),
  );
  if (!redeemed) return refused(ctx, req, !form);
  const nonce = encodeBase64Url(crypto.getRandomValues(new Uint8Array(16)));
  const expires = Math.floor(ctx.now() / 1000) + RECOVERY_SECONDS;
  await ctx.tokenStore.put({
    tokenHash: await sha256Hex(nonce),
    purpose: SESSION_PURPOSE,
    subject: owner.id,
    email: "",
    expiresAt: expires * 1000,
    createdAt: ctx.now(),
  });
  const value = await ctx.signer(SESSION_PURPOSE).sign(
    new TextEncoder().encode(
      JSON.stringify({ s: owner.id, n: nonce, e: expires }),
    ),
  );
  const cookie = settings.recovery.cookie.set(value, RECOVERY_SECONDS);
  emit(ctx, { type: "recovery_started", subject: owner.id });
  if (!form) {
    return strictOrigin(
      json({ recovering: true }, 200, { "set-cookie": cookie }),
    );
  }
  return strictOrigin(redirect("/passkeys/recover/session", [cookie]));
}

/**
 * `GET /passkeys/recover/session`: the recovery session's page (add a
 * passkey, set a password, end the recovery); without one, 303 to
 * `/passkeys/recover`.
 */
export async function recoverySessionPage(
  ctx: ModuleContext,
  settings: PasskeysSettings,
  req: Request,
): Promise<Response> {
  const state = await readState(ctx, settings.recovery, req);
  if (state === null) return redirect("/passkeys/recover", []);
  const user = await ctx.credentials.findById(state.subject);
  if (user === null) return redirect("/passkeys/recover", []);
  return render(
    ctx,
    settings.views.recoverySessionPage({ email: user.email, error: null }),
  );
}

/**
 * `POST /passkeys/recover/options` (recovery session): the creation
 * options of a new passkey for the account. No recovery session: 403
 * `recovery_required`.
 */
export async function recoveryOptions(
  ctx: ModuleContext,
  settings: PasskeysSettings,
  req: Request,
): Promise<Response> {
  const state = await readState(ctx, settings.recovery, req);
  if (state === null) return noRecovery(req);
  const user = await ctx.credentials.findById(state.subject);
  if (user === null) return noRecovery(req);
  return json(
    await settings.authenticator.registrationOptions({
      subject: user.id,
      email: user.email,
    }, "recover"),
  );
}

/**
 * `POST /passkeys/recover/register` (recovery session; JSON `{response,
 * name}`): adds the passkey, ends the recovery (its one use), revokes every
 * session of the account and signs this browser in: 201 `{next, token,
 * expiresAt}`. The passkey refused: 400 `passkey_refused`, the recovery
 * goes on; no recovery session (or its one use is spent): 403
 * `recovery_required`.
 */
export async function recoveryRegister(
  ctx: ModuleContext,
  settings: PasskeysSettings,
  req: Request,
): Promise<Response> {
  const state = await readState(ctx, settings.recovery, req);
  if (state === null) return noRecovery(req);
  const body = await jsonOrBadRequest(req);
  if (body instanceof Response) return body;
  const name = typeof body.name === "string" ? body.name : "Passkey";
  const outcome = await settings.authenticator.register(
    state.subject,
    body.response,
    name,
    "recover",
  );
  if (outcome.kind === "refused") {
    return json({
      error: "passkey_refused",
      reason: outcome.reason,
      message: "The passkey could not be added",
    }, 400);
  }
  if (!(await spend(ctx, state))) {
    // The one use went elsewhere (a copy of the cookie): the passkey
    // this request added goes too.
    await settings.store.remove(state.subject, outcome.passkey.credentialId);
    return noRecovery(req);
  }
  await record(ctx, "passkey_added", state.subject, req);
  emit(ctx, { type: "passkey_added", subject: state.subject });
  await ctx.sessions.revokeAll(state.subject);
  const session = await signInWith(ctx, req, state.subject, "recovery");
  return withCookies(
    json({ next: "/account", ...tokenFields(session) }, 201),
    [session.setCookie, settings.recovery.cookie.clear()],
  );
}

/**
 * `POST /passkeys/recover/password` (recovery session; form or JSON
 * `{password}`): sets the password, ends the recovery (its one use),
 * revokes every session and signs this browser in (form: 303 to
 * `/account`; JSON: 200 `{token, expiresAt}`). A refused password: 422,
 * the recovery goes on; no recovery session: 403 `recovery_required`.
 */
export async function recoveryPassword(
  ctx: ModuleContext,
  settings: PasskeysSettings,
  req: Request,
): Promise<Response> {
  const state = await readState(ctx, settings.recovery, req);
  if (state === null) return noRecovery(req);
  const body = await bodyOrBadRequest(req);
  if (body instanceof Response) return body;
  const form = body.kind !== "json";
  const password = body.fields.password ?? "";
  try {
    await ctx.passwords.checkNewPassword(password);
  } catch (error) {
    if (!(error instanceof AuthError) || error.code !== "INVALID_PASSWORD") {
      throw error;
    }
    const message = error.reason === "passwordCommon"
      ? "That password is too common: choose another"
      : "That password is refused: choose a longer one";
    if (!form) return json({ error: "invalid_password", message }, 422);
    const user = await ctx.credentials.findById(state.subject);
    return render(
      ctx,
      settings.views.recoverySessionPage({
        email: user?.email ?? "",
        error: message,
      }),
      422,
    );
  }
  // The new password's hash runs inside the hashing bound, its slot taken
  // before the recovery is spent: a full bound answers 503 and the
  // recovery goes on. The change revokes every session before and after
  // it writes.
  const spent = await ctx.hashing.run(async () => {
    if (!(await spend(ctx, state))) return false;
    await ctx.passwords.changePassword(state.subject, password);
    return true;
  });
  if (!spent) return noRecovery(req);
  await record(ctx, "password_changed", state.subject, req);
  const session = await signInWith(ctx, req, state.subject, "recovery");
  const cookies = [session.setCookie, settings.recovery.cookie.clear()];
  if (!form) return withCookies(json(tokenFields(session)), cookies);
  return redirect("/account", [
    ...cookies,
    await ctx.flash.set({
      kind: "notice",
      message: "Your password is set, and every other session is signed out.",
    }),
  ]);
}

/** `POST /passkeys/recover/end`: drops the recovery session; 303 to `/login`. */
export function endRecovery(
  _ctx: ModuleContext,
  settings: PasskeysSettings,
): Response {
  return redirect("/login", [settings.recovery.cookie.clear()]);
}

/** Spends the recovery session's one use; `false` when already spent. */
/**
 * Ends every open recovery session of the account (the owner changed the
 * password or the address, or signed out everywhere: whoever opened the
 * mailbox before keeps nothing). An unredeemed link is bound to the
 * address it was sent to, and dies with an email change.
 *
 * @param ctx The app.
 * @param subject The account.
 */
export async function cancelRecoveries(
  ctx: ModuleContext,
  subject: string,
): Promise<void> {
  await ctx.tokens.revokeFor(subject, SESSION_PURPOSE);
}

async function spend(
  ctx: ModuleContext,
  state: RecoveryState,
): Promise<boolean> {
  const found = await ctx.tokenStore.consume(
    await sha256Hex(state.nonce),
    SESSION_PURPOSE,
  );
  return found !== null && found.subject === state.subject &&
    found.expiresAt > ctx.now();
}

function withCookies(res: Response, cookies: (string | null)[]): Response {
  for (const c of cookies) if (c) res.headers.append("set-cookie", c);
  return res;
}

function noRecovery(req: Request): Response {
  return errorResponse(
    req,
    403,
    "recovery_required",
    "Open a recovery link first: this browser is not recovering an account",
  );
}

/** The account a token belongs to (checked, not consumed), or `null`. */
async function ownerOf(
  ctx: ModuleContext,
  { recovery }: PasskeysSettings,
  token: string,
) {
  const found = token === "" || token.length > 512
    ? null
    : await recovery.links.peek(
      token,
      RECOVERY_LINK_PURPOSE,
      currentEmailCheck(ctx),
    );
  return found === null ? null : await ctx.credentials.findById(found.subject);
}

function refused(ctx: ModuleContext, req: Request, asJson: boolean): Response {
  if (asJson) {
    return strictOrigin(errorResponse(req, 400, "invalid_link", REFUSED));
  }
  return strictOrigin(render(
    ctx,
    ctx.views.message({
      title: "This link does not work",
      message: REFUSED,
      email: null,
    }),
    400,
  ));
}
