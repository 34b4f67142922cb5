/**
 * Sign-up with an email and a passkey, no password: `GET /passkeys/signup`
 * (the page), `POST /passkeys/signup/options` (the creation options for a
 * new account, with the signed pending sign-up) and `POST /passkeys/signup`
 * (the passkey: the account is created with it, the verification link
 * goes out, and the browser is signed in).
 *
 * The account has no password (its stored hash is the "no password"
 * marker). Its address is proven by the mailed link as any other: the
 * owner's own signed-in browser keeps the passkey, any other browser that
 * redeems the link disowns the account (the passkey goes, as everything
 * else someone set up before the proof). Until the address is proven the
 * account gains no other passkey and no other sign-in method.
 *
 * @module
 */
import { errorResponse, normalizeEmail, safeNextPath } from "@portcullis/auth";
import { encodeBase64Url } from "@portcullis/bytes";
import {
  afterRegister,
  emit,
  json,
  limit,
  type ModuleContext,
  NO_PASSWORD,
  record,
  render,
  signInWith,
  tokenFields,
  tooManyRequests,
} from "@portcullis/accounts/plugin";
import { jsonOrBadRequest } from "./json_body.ts";
import type { PasskeysSettings } from "./settings.ts";
import { passkeyName } from "../_passkey_name.ts";
import { invalidName } from "./routes.ts";

/** How long a started sign-up may take: the challenge's five minutes. */
const SIGNUP_SECONDS = 300;

/** `GET /passkeys/signup`: the page (its button needs JavaScript). */
export function signupPage(
  ctx: ModuleContext,
  { views }: PasskeysSettings,
  req: Request,
): Response {
  const next = safeNextPath(new URL(req.url).searchParams.get("next"));
  return render(ctx, views.signupPage({ next }));
}

/**
 * `POST /passkeys/signup/options` (JSON `{email}`): `{options, pending}`,
 * the creation options of a new account's first passkey and the signed
 * pending sign-up (address and subject) that `POST /passkeys/signup` takes
 * back. Not an address: 422 `invalid_email`; registered: 409
 * `email_taken` (registration's own answer); limited per client address
 * as registration is: 429.
 */
export async function signupOptions(
  ctx: ModuleContext,
  { authenticator }: PasskeysSettings,
  req: Request,
): Promise<Response> {
  const body = await jsonOrBadRequest(req);
  if (body instanceof Response) return body;
  let email: string;
  try {
    email = normalizeEmail(typeof body.email === "string" ? body.email : "");
  } catch {
    return json({
      error: "invalid_email",
      message: "Enter a valid email address",
    }, 422);
  }
  const wait = await ctx.limiter.take([
    limit(
      "register-address",
      ctx.clientAddress(req),
      ctx.limits.registerPerAddress,
    ),
  ]);
  if (wait > 0) return tooManyRequests(req, wait);
  if (await ctx.credentials.findByEmail(email) !== null) return taken();
  const subject = encodeBase64Url(crypto.getRandomValues(new Uint8Array(16)));
  const pending = await ctx.signer("passkey-signup").sign(
    new TextEncoder().encode(JSON.stringify({
      s: subject,
      m: email,
      e: Math.floor(ctx.now() / 1000) + SIGNUP_SECONDS,
    })),
  );
  const options = await authenticator.registrationOptions(
    { subject, email },
    "signup",
  );
  return json({ options, pending });
}

/**
 * `POST /passkeys/signup` (JSON `{pending, response, name, next}`): checks
 * the pending sign-up and the passkey, creates the account with it (no
 * password), sends the verification link and signs in: 201 `{next, token,
 * expiresAt}` with the session cookie. A pending value that is forged,
 * expired or malformed: 400 `invalid_signup`; the address registered
 * meanwhile: 409 `email_taken`; the passkey refused: 400
 * `passkey_refused` (no account stays); a name longer than 64 characters
 * or with a control, invisible or direction-changing character: 422
 * `invalid_name`, before any account is made.
 */
export async function signup(
  ctx: ModuleContext,
  { authenticator }: PasskeysSettings,
  req: Request,
): Promise<Response> {
  const body = await jsonOrBadRequest(req);
  if (body instanceof Response) return body;
  const pending = await readPending(ctx, body.pending);
  if (pending === null) {
    return errorResponse(
      req,
      400,
      "invalid_signup",
      "This sign-up expired or is not valid: start again",
    );
  }
  const name = typeof body.name === "string" ? body.name : "Passkey";
  if (passkeyName(name) === null) return invalidName(req);
  const created = await ctx.credentials.create({
    id: pending.subject,
    email: pending.email,
    // No password: this marker is no hash any hasher accepts.
    passwordHash: NO_PASSWORD,
    createdAt: ctx.now(),
  });
  if (created.kind === "emailTaken") return taken();
  const outcome = await authenticator.register(
    pending.subject,
    body.response,
    name,
    "signup",
  );
  if (outcome.kind === "refused") {
    // The account was made for this passkey alone: without it, it goes.
    await ctx.credentials.deleteUser(pending.subject).catch((error) =>
      ctx.log(`passkey sign-up clean-up failed: ${(error as Error)?.message}`)
    );
    emit(ctx, {
      type: "login_failed",
      method: "passkey",
      reason: outcome.reason,
    });
    return json({
      error: "passkey_refused",
      reason: outcome.reason,
      message: "The passkey could not be added",
    }, 400);
  }
  await record(ctx, "registered", pending.subject, req);
  await record(ctx, "passkey_added", pending.subject, req);
  emit(ctx, { type: "passkey_added", subject: pending.subject });
  const lines = await afterRegister(ctx, pending.subject);
  const session = await signInWith(ctx, req, pending.subject, "passkey");
  const headers = new Headers();
  if (session.setCookie) headers.append("set-cookie", session.setCookie);
  headers.append(
    "set-cookie",
    await ctx.flash.set({
      kind: "notice",
      message: ["Your account is ready.", ...lines].join(" "),
    }),
  );
  return json(
    {
      next: safeNextPath(typeof body.next === "string" ? body.next : null),
      ...tokenFields(session),
    },
    201,
    headers,
  );
}

function taken(): Response {
  return json({
    error: "email_taken",
    message: "That email is already registered",
  }, 409);
}

/** The pending sign-up a value signed for it holds, or `null`. */
async function readPending(
  ctx: ModuleContext,
  value: unknown,
): Promise<{ subject: string; email: string } | null> {
  if (typeof value !== "string" || value.length > 2048) return null;
  const payload = await ctx.signer("passkey-signup").verify(value);
  if (payload === null) return null;
  try {
    const d = JSON.parse(new TextDecoder().decode(payload));
    if (
      typeof d.s !== "string" || typeof d.m !== "string" ||
      typeof d.e !== "number" || d.e * 1000 <= ctx.now()
    ) return null;
    return { subject: d.s, email: d.m };
  } catch {
    return null;
  }
}
