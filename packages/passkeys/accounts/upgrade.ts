/**
 * The automatic passkey upgrade (WebAuthn conditional create): right after
 * a password sign-in (`POST /login`), the browser that signed in may make
 * a passkey without a dialog, where it supports `mediation: "conditional"`
 * on `create` (its password manager decides).
 *
 * The right to do so is a cookie signed for this purpose alone, set on the
 * answer that started the session (the module's `afterRoute` adds it when
 * that answer carries a new ordinary session cookie; a second step, such
 * as TOTP, starts none, and its own answer grants nothing), bound to the
 * account and to the very session it was issued with (its jti, under the
 * MAC), living five minutes, its one use recorded in the single-use token
 * table. It stands for the password just given, as the re-check before
 * adding a passkey asks: a session cookie alone (stolen, however fresh)
 * never adds a passkey.
 *
 * The right dies with its session: a re-mint of the session (signing out
 * everywhere else, a password change, a sign-in again), its binding to a
 * device (DBSC registration gives it a new jti), signing out and signing
 * out everywhere all leave a right whose jti is no longer the request's,
 * and it is refused (403 `upgrade_unavailable`, its cookie cleared). A
 * device-bound (or DPoP-bound) session never carries one: binding makes a
 * copied cookie worth minutes, and a passkey added with it would outlast
 * them. So a browser that binds its session before its page asks for the
 * passkey skips the silent upgrade; its user adds a passkey from the
 * account page, behind the re-check.
 *
 * While the right holds for the request's session, the app's HTML pages
 * load the browser module with a marker (`#passkey-upgrade`), whose script
 * makes the attempt (`POST /passkeys/upgrade/options`, then
 * `POST /passkeys/upgrade`).
 *
 * @module
 */
import { currentIdentity, errorResponse } from "@portcullis/auth";
import { encodeBase64Url, sha256Hex } from "@portcullis/bytes";
import {
  emit,
  json,
  type ModuleContext,
  record,
  refuseUnverified,
  ShortCookie,
} from "@portcullis/accounts/plugin";
import { jsonOrBadRequest } from "./json_body.ts";
import type { PasskeysSettings, Upgrade } from "./settings.ts";

export type { Upgrade };

/** How long a sign-in's upgrade right lasts: five minutes. */
export const UPGRADE_SECONDS = 300;
const PURPOSE = "passkey-upgrade";

/** The marker and the module the pages get while an upgrade may happen. */
const MARKER =
  '<span id="passkey-upgrade" hidden></span><script type="module" src="/assets/passkeys.js"></script>';

/**
 * Makes the upgrade's parts for an app.
 *
 * @param ctx The app.
 * @returns The parts.
 */
export function upgradeParts(ctx: ModuleContext): Upgrade {
  return {
    cookie: new ShortCookie("passkey-upgrade", ctx.cookieSecure),
    sessionCookie: ctx.cookieSecure ? "__Host-session" : "session",
  };
}

/** A right as its cookie carries it, its MAC and expiry checked. */
interface Right {
  /** The account. */
  subject: string;
  /** The single-use token's nonce. */
  nonce: string;
  /** The jti of the session it was issued with. */
  jti: string;
}

async function readRight(
  ctx: ModuleContext,
  upgrade: Upgrade,
  req: Request,
): Promise<Right | null> {
  const value = upgrade.cookie.read(req);
  if (value === null || value.length > 1024) return null;
  const payload = await ctx.signer(PURPOSE).verify(value);
  if (payload === null) return null;
  try {
    const d = JSON.parse(new TextDecoder().decode(payload));
    // A right without its session's jti (issued before rights were bound
    // to their session) is no right.
    if (
      typeof d.s !== "string" || typeof d.n !== "string" ||
      typeof d.j !== "string" || d.j === "" ||
      typeof d.e !== "number" || d.e * 1000 <= ctx.now()
    ) return null;
    return { subject: d.s, nonce: d.n, jti: d.j };
  } catch {
    return null;
  }
}

/**
 * Whether a right holds for the request's session: the same account, the
 * very session it was issued with (its jti: a re-mint, a device binding or
 * a sign-out leaves another jti or none), an ordinary session (never a
 * device- or DPoP-bound one), the owner in person.
 */
function holdsFor(right: Right, req: Request): boolean {
  const identity = currentIdentity(req);
  return identity !== null && identity.subject === right.subject &&
    identity.jti === right.jti && identity.binding === undefined &&
    identity.actor === undefined && identity.apiKey === undefined;
}

/**
 * The module's `afterRoute` part: adds the upgrade right to the answer of
 * `POST /login` that started a session, and, while the signed-in user's
 * right lives, the marker and the browser module to the app's HTML pages.
 * Nothing for other requests (no promise without the cookie).
 *
 * @param ctx The app.
 * @param upgrade The upgrade's parts.
 * @returns The hook.
 */
export function upgradeHook(
  ctx: ModuleContext,
  upgrade: Upgrade,
): (req: Request, res: Response) => Response | null | Promise<Response | null> {
  return (req, res) => {
    if (req.method === "POST" && new URL(req.url).pathname === "/login") {
      return grant(ctx, upgrade, res);
    }
    if (
      req.method !== "GET" || res.status !== 200 ||
      upgrade.cookie.read(req) === null ||
      !(res.headers.get("content-type") ?? "").startsWith("text/html")
    ) return null;
    return mark(ctx, upgrade, req, res);
  };
}

async function grant(
  ctx: ModuleContext,
  upgrade: Upgrade,
  res: Response,
): Promise<Response | null> {
  const started = res.headers.getSetCookie().find((c) =>
    c.startsWith(`${upgrade.sessionCookie}=`) && !/Max-Age=0(;|$)/.test(c)
  );
  if (started === undefined) return null;
  const token = started.slice(upgrade.sessionCookie.length + 1).split(";")[0];
  const identity = await ctx.sessions.resolve(token);
  // Only an ordinary session of the owner in person is granted the right:
  // a bound session never carries one.
  if (
    identity === null || identity.binding !== undefined ||
    identity.actor !== undefined || identity.apiKey !== undefined
  ) return null;
  const subject = identity.subject;
  const nonce = encodeBase64Url(crypto.getRandomValues(new Uint8Array(16)));
  const expires = Math.floor(ctx.now() / 1000) + UPGRADE_SECONDS;
  await ctx.tokenStore.put({
    tokenHash: await sha256Hex(nonce),
    purpose: PURPOSE,
    subject,
    email: "",
    expiresAt: expires * 1000,
    createdAt: ctx.now(),
  });
  const value = await ctx.signer(PURPOSE).sign(
    new TextEncoder().encode(
      JSON.stringify({ s: subject, n: nonce, j: identity.jti, e: expires }),
    ),
  );
  // In place: the app's answers have mutable headers, and a replacement
  // answer would take the first one's cookies instead of its own.
  res.headers.append("set-cookie", upgrade.cookie.set(value, UPGRADE_SECONDS));
  return null;
}

async function mark(
  ctx: ModuleContext,
  upgrade: Upgrade,
  req: Request,
  res: Response,
): Promise<Response | null> {
  const right = await readRight(ctx, upgrade, req);
  if (right === null || !holdsFor(right, req)) return null;
  const page = await res.text();
  const at = page.lastIndexOf("</body>");
  const body = at < 0
    ? page + MARKER
    : page.slice(0, at) + MARKER + page.slice(at);
  const headers = new Headers(res.headers);
  headers.delete("content-length");
  return new Response(body, { status: res.status, headers });
}

/**
 * The right of the request's session, or the 403 to answer. A right that
 * is not this session's (another account's, or of a session since
 * re-minted, bound to a device or signed out) can never hold again: the
 * 403 clears its cookie.
 */
async function rightOf(
  ctx: ModuleContext,
  upgrade: Upgrade,
  req: Request,
): Promise<Right | Response> {
  const right = await readRight(ctx, upgrade, req);
  if (right === null) {
    return errorResponse(
      req,
      403,
      "upgrade_unavailable",
      "A passkey is made this way only just after signing in: add one from your account page",
    );
  }
  if (!holdsFor(right, req)) {
    const refused = errorResponse(
      req,
      403,
      "upgrade_unavailable",
      "This offer was for the session that signed in, which has changed since (bound to this device, signed in again or signed out): add a passkey from your account page",
    );
    refused.headers.append("set-cookie", upgrade.cookie.clear());
    return refused;
  }
  return await refuseUnverified(ctx, req, right.subject) ?? right;
}

/**
 * `POST /passkeys/upgrade/options` (signed in, with the upgrade right of a
 * sign-in in the last five minutes, the session still the one it was
 * issued with): the creation options of a passkey for a conditional
 * create. No right, another user's or another session's (re-minted, bound
 * to a device, signed out): 403 `upgrade_unavailable`; an unverified
 * address: 403 `unverified`.
 */
export async function upgradeOptions(
  ctx: ModuleContext,
  settings: PasskeysSettings,
  req: Request,
): Promise<Response> {
  const right = await rightOf(ctx, settings.upgrade, req);
  if (right instanceof Response) return right;
  const user = await ctx.credentials.findById(right.subject);
  if (user === null) return errorResponse(req, 404, "not_found", "No account");
  return json(
    await settings.authenticator.registrationOptions({
      subject: user.id,
      email: user.email,
    }, "upgrade"),
  );
}

/**
 * `POST /passkeys/upgrade` (signed in, with the upgrade right of the
 * request's own session; JSON `{response}`): stores the passkey the
 * browser made without a dialog, spends the right and records
 * `passkey_added`: 201 `{id, name}`, the right's cookie cleared. No right,
 * another session's, or its one use spent: 403 `upgrade_unavailable`;
 * refused: 400 `passkey_refused`, the right kept (the browser may try
 * again with new options while it lives).
 *
 * The response is checked first; only a passkey that passes claims the
 * right (an atomic consume of its single-use token), and only the claim's
 * winner stores its passkey: of parallel good attempts, one passkey.
 */
export async function upgradeRegister(
  ctx: ModuleContext,
  settings: PasskeysSettings,
  req: Request,
): Promise<Response> {
  const right = await rightOf(ctx, settings.upgrade, req);
  if (right instanceof Response) return right;
  const body = await jsonOrBadRequest(req);
  if (body instanceof Response) return body;
  const checked = await settings.authenticator.checkRegistration(
    right.subject,
    body.response,
    "Passkey",
    "upgrade",
  );
  if (checked.kind === "refused") return refusedPasskey(checked.reason);
  // A credential already stored is refused before the claim, the right
  // kept.
  if (await settings.store.find(checked.passkey.credentialId) !== null) {
    return refusedPasskey("credential_exists");
  }
  const spent = await ctx.tokenStore.consume(
    await sha256Hex(right.nonce),
    PURPOSE,
  );
  if (
    spent === null || spent.subject !== right.subject ||
    spent.expiresAt <= ctx.now()
  ) {
    return errorResponse(
      req,
      403,
      "upgrade_unavailable",
      "This sign-in already made its passkey",
    );
  }
  if (!(await settings.store.add(checked.passkey))) {
    // Stored meanwhile by a parallel request: nothing was added here, so
    // the right goes back for the rest of its life.
    await ctx.tokenStore.put(spent);
    return refusedPasskey("credential_exists");
  }
  await record(ctx, "passkey_added", right.subject, req);
  emit(ctx, {
    type: "passkey_added",
    subject: right.subject,
    method: "upgrade",
  });
  return json(
    { id: checked.passkey.credentialId, name: checked.passkey.name },
    201,
    { "set-cookie": settings.upgrade.cookie.clear() },
  );
}

/** 400 `passkey_refused` with its reason; the right's cookie stays. */
function refusedPasskey(reason: string): Response {
  return json(
    {
      error: "passkey_refused",
      reason,
      message: "The passkey could not be added",
    },
    400,
  );
}
