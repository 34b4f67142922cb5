/**
 * Passkeys: the browser module (`GET /assets/passkeys.js`), the two
 * ceremonies as JSON (`POST /passkeys/register/options`,
 * `/passkeys/register`, `/passkeys/login/options`, `/passkeys/login`), the
 * "confirm it's you" ceremony (`POST /passkeys/reauth/options`,
 * `/passkeys/reauth`) and the account page's forms
 * (`POST /account/passkeys/rename`, `/account/passkeys/delete`). A sign-in
 * ends in `signIn`, as the password flow does.
 *
 * @module
 */
import { currentUser, errorResponse, safeNextPath } from "@portcullis/auth";
import {
  bodyOrBadRequest,
  emit,
  json,
  limit,
  type ModuleContext,
  record,
  redirect,
  refuseUnverified,
  requireRecheck,
  signInWith,
  soleFactorRefusal,
  tokenFields,
  tooManyRequests,
} from "@portcullis/accounts/plugin";
import { jsonOrBadRequest } from "./json_body.ts";
import type { PasskeysSettings } from "./settings.ts";
import { PASSKEY_NAME_MESSAGE, passkeyName } from "../_passkey_name.ts";

export type { PasskeysSettings };

const CEREMONIES_PER_ADDRESS = { max: 60, windowSeconds: 15 * 60 };

/**
 * Counts a ceremony against the client address's limit: the 429, or
 * `null` to go on.
 */
async function ceremonyLimit(
  ctx: ModuleContext,
  req: Request,
): Promise<Response | null> {
  const wait = await ctx.limiter.take([
    limit("passkey-address", ctx.clientAddress(req), CEREMONIES_PER_ADDRESS),
  ]);
  return wait > 0 ? tooManyRequests(req, wait) : null;
}

/**
 * What both steps of adding a passkey start with: the signed-in user,
 * refused while the address is unverified (403 `unverified`: an
 * unverified account gains no passkey), and the JSON body.
 */
async function addingPasskey(
  ctx: ModuleContext,
  req: Request,
): Promise<{ subject: string; body: Record<string, unknown> } | Response> {
  const subject = currentUser(req)!;
  const unverified = await refuseUnverified(ctx, req, subject);
  if (unverified) return unverified;
  const body = await jsonOrBadRequest(req);
  return body instanceof Response ? body : { subject, body };
}

/** `GET /assets/passkeys.js`. */
export function passkeysScript(
  _ctx: ModuleContext,
  { script }: PasskeysSettings,
): Response {
  return new Response(script, {
    headers: {
      "content-type": "text/javascript; charset=utf-8",
      "cache-control": "public, max-age=300",
    },
  });
}

/**
 * `POST /passkeys/register/options` (signed in; JSON `{password}`, or a
 * fresh re-authentication): a session alone must not add a passkey, which
 * would outlive it and pass the re-check itself. Wrong or missing
 * password: 401 `invalid_credentials`; an account without a password and
 * no fresh re-authentication: 403; an unverified address: 403
 * `unverified` (verify first: an unverified account gains no passkey).
 */
export async function registrationOptions(
  ctx: ModuleContext,
  { authenticator }: PasskeysSettings,
  req: Request,
): Promise<Response> {
  const adding = await addingPasskey(ctx, req);
  if (adding instanceof Response) return adding;
  const { subject, body } = adding;
  const user = await ctx.credentials.findById(subject);
  if (user === null) return errorResponse(req, 404, "not_found", "No account");
  const refused = await requireRecheck(
    ctx,
    req,
    subject,
    typeof body.password === "string" ? body.password : undefined,
  );
  if (refused) return refused;
  return json(
    await authenticator.registrationOptions({ subject, email: user.email }),
  );
}

/**
 * `POST /passkeys/register` (signed in): `{response, name}` → 201
 * `{id, name}`; an unverified address: 403 `unverified`; a name longer
 * than 64 characters or with a control, invisible or direction-changing
 * character: 422 `invalid_name`, the challenge not spent.
 */
export async function register(
  ctx: ModuleContext,
  { authenticator }: PasskeysSettings,
  req: Request,
): Promise<Response> {
  const adding = await addingPasskey(ctx, req);
  if (adding instanceof Response) return adding;
  const { subject, body } = adding;
  const name = typeof body.name === "string" ? body.name : "Passkey";
  if (passkeyName(name) === null) return invalidName(req);
  const outcome = await authenticator.register(subject, body.response, name);
  if (outcome.kind === "refused") {
    return json({
      error: "passkey_refused",
      reason: outcome.reason,
      message: "The passkey could not be added",
    }, 400);
  }
  await record(ctx, "passkey_added", subject, req);
  emit(ctx, { type: "passkey_added", subject });
  return json(
    { id: outcome.passkey.credentialId, name: outcome.passkey.name },
    201,
  );
}

/**
 * `POST /passkeys/login/options`, and `POST /passkeys/reauth/options` for a
 * signed-in user: a challenge to sign in or confirm with.
 */
export async function authenticationOptions(
  ctx: ModuleContext,
  { authenticator }: PasskeysSettings,
  req: Request,
): Promise<Response> {
  return await ceremonyLimit(ctx, req) ??
    json(await authenticator.authenticationOptions());
}

/**
 * `POST /passkeys/login`: `{response, next}` → 200 `{next, token,
 * expiresAt}` with the session cookie; refused → 401, one answer whatever
 * the reason (the reason goes to the event hook).
 */
export async function login(
  ctx: ModuleContext,
  { authenticator }: PasskeysSettings,
  req: Request,
): Promise<Response> {
  const body = await jsonOrBadRequest(req);
  if (body instanceof Response) return body;
  const limited = await ceremonyLimit(ctx, req);
  if (limited) return limited;
  const outcome = await authenticator.authenticate(body.response);
  if (outcome.kind === "refused") {
    await record(ctx, "login_failed", null, req);
    emit(ctx, {
      type: "login_failed",
      method: "passkey",
      reason: outcome.reason,
    });
    // The one answer, whatever the reason; a passkey the server does not
    // know is also named, so the page can tell the browser
    // (`signalUnknownCredential`) and its provider hide it. Its id is the
    // browser's own: the answer tells nothing it did not send.
    return json({
      error: "passkey_refused",
      message: outcome.reason === "unknown_credential"
        ? "This passkey is not known here: it may have been removed"
        : "Sign-in with this passkey failed",
      ...(outcome.reason === "unknown_credential"
        ? { unknownCredential: true }
        : {}),
    }, 401);
  }
  const session = await signInWith(ctx, req, outcome.subject, "passkey");
  const next = safeNextPath(typeof body.next === "string" ? body.next : null);
  const headers = new Headers();
  if (session.setCookie) headers.append("set-cookie", session.setCookie);
  return json(
    { next, ...tokenFields(session) },
    200,
    headers,
  );
}

/**
 * `POST /passkeys/reauth` (signed in; JSON `{response, next}`): one of the
 * signed-in user's own passkeys confirms it is them. 200 `{next}` with the
 * re-authentication cookie (five minutes, this session only); a passkey of
 * someone else, or any refusal: 401, one answer.
 */
export async function reauth(
  ctx: ModuleContext,
  { authenticator }: PasskeysSettings,
  req: Request,
): Promise<Response> {
  const subject = currentUser(req)!;
  const body = await jsonOrBadRequest(req);
  if (body instanceof Response) return body;
  const limited = await ceremonyLimit(ctx, req);
  if (limited) return limited;
  const outcome = await authenticator.authenticate(body.response);
  const cookie = outcome.kind === "ok" && outcome.subject === subject
    ? await ctx.reauth.grant(req, "passkey")
    : null;
  if (cookie === null) {
    emit(ctx, {
      type: "login_failed",
      method: "passkey",
      reason: outcome.kind === "refused" ? outcome.reason : "another_user",
    });
    return json({
      error: "passkey_refused",
      message: "Confirmation with this passkey failed",
    }, 401);
  }
  emit(ctx, { type: "reauthenticated", method: "passkey", subject });
  const next = safeNextPath(typeof body.next === "string" ? body.next : null);
  return json({ next }, 200, { "set-cookie": cookie });
}

/**
 * `POST /account/passkeys/rename`: form `id`, `name` (trimmed, `Passkey`
 * when empty). A name longer than 64 characters or with a control,
 * invisible or direction-changing character: 422 `invalid_name`, nothing
 * renamed; not the user's passkey: 404.
 */
export function rename(
  ctx: ModuleContext,
  settings: PasskeysSettings,
  req: Request,
): Promise<Response> {
  return change(ctx, req, async (subject, fields) => {
    const name = passkeyName(fields.name ?? "");
    if (name === null) return invalidName(req);
    return await settings.store.rename(subject, fields.id ?? "", name)
      ? "The passkey is renamed."
      : null;
  });
}

/**
 * The answer to a refused passkey name: 422 `invalid_name`, JSON or a
 * small page.
 *
 * @param req The request.
 * @returns The response.
 */
export function invalidName(req: Request): Response {
  return errorResponse(req, 422, "invalid_name", PASSKEY_NAME_MESSAGE);
}

/**
 * `POST /account/passkeys/delete`: form `id`, and `password` (or a fresh
 * re-authentication). Wrong or missing password: 401
 * `invalid_credentials`, as at every re-check (`POST /account/delete`
 * included); an account without a password and no fresh
 * re-authentication: 403 `reauthentication_required`; not the user's
 * passkey: 404; the account's last second factor while its password is
 * shorter than a sole factor's minimum (15): 409 `password_too_short`.
 * The check and the removal run in the account's critical section
 * (`ModuleContext.exclusive`), and the check runs again after the
 * removal: a password changed or passkeys removed meanwhile by another
 * process put this passkey back (409 `password_too_short`).
 */
export function remove(
  ctx: ModuleContext,
  settings: PasskeysSettings,
  req: Request,
): Promise<Response> {
  return change(ctx, req, (subject, fields) =>
    // Alone among the account's factor changes in this process: a password
    // change to one that needs a second factor waits, and so does this.
    ctx.exclusive(subject, async () => {
      const before = await ctx.credentials.findById(subject);
      const refused = await requireRecheck(
        ctx,
        req,
        subject,
        fields.password,
      );
      if (refused) return refused;
      // NIST SP 800-63B-4: the last passkey of an account with a password
      // shorter than 15 characters stays until the password is longer.
      const keys = await settings.store.listFor(subject);
      const removed = keys.find((k) => k.credentialId === fields.id);
      if (removed !== undefined) {
        const sole = await soleFactorRefusal(ctx, {
          subject,
          method: "passkeys",
          password: fields.password || undefined,
          methodKeepsOne: keys.length > 1,
        });
        if (sole !== null) {
          return errorResponse(req, 409, "password_too_short", sole);
        }
      }
      if (!(await settings.store.remove(subject, fields.id ?? ""))) {
        return null;
      }
      // The check again, after the write: another process may have
      // changed the password (its new length is not known) or removed the
      // account's other passkeys meanwhile. If the password would now be
      // the only factor and is not known to be long enough, the passkey
      // goes back.
      if (removed !== undefined && before !== null) {
        const undo = await refusedAfterRemoval(ctx, settings, {
          subject,
          before,
          password: fields.password || undefined,
        });
        if (undo !== null) {
          await settings.store.add(removed);
          return errorResponse(req, 409, "password_too_short", undo);
        }
      }
      await record(ctx, "passkey_removed", subject, req);
      emit(ctx, { type: "passkey_removed", subject });
      return "The passkey is removed.";
    }));
}

/**
 * The sole-factor rule asked again once a passkey is gone: the password
 * typed counts only while the stored hash is still the one read before
 * the re-check; answers the refusal's message, or `null` when the
 * removal stands.
 */
async function refusedAfterRemoval(
  ctx: ModuleContext,
  settings: PasskeysSettings,
  input: {
    subject: string;
    before: { passwordHash: string };
    password: string | undefined;
  },
): Promise<string | null> {
  const now = await ctx.credentials.findById(input.subject);
  const same = now?.passwordHash === input.before.passwordHash;
  return await soleFactorRefusal(ctx, {
    subject: input.subject,
    method: "passkeys",
    password: same ? input.password : undefined,
    methodKeepsOne: (await settings.store.listFor(input.subject)).length > 0,
  });
}

async function change(
  ctx: ModuleContext,
  req: Request,
  act: (
    subject: string,
    fields: Record<string, string>,
  ) => Promise<string | Response | null>,
): Promise<Response> {
  const subject = currentUser(req)!;
  const body = await bodyOrBadRequest(req);
  if (body instanceof Response) return body;
  const done = await act(subject, body.fields);
  if (done instanceof Response) return done;
  if (done === null) {
    return errorResponse(req, 404, "not_found", "No such passkey");
  }
  if (body.kind === "json") return new Response(null, { status: 204 });
  return redirect("/account", [
    await ctx.flash.set({ kind: "notice", message: done }),
  ]);
}
