/**
 * The API keys' routes: `GET /api/keys`, `POST /api/keys`,
 * `DELETE /api/keys/:id`, and the account page's forms
 * (`POST /account/keys`, `POST /account/keys/revoke`).
 *
 * @module
 */
import { currentUser, errorResponse } from "@portcullis/auth";
import type { ApiKeys } from "@portcullis/auth/sessions";
import type { SQLApiKeyRecord, SQLApiKeyStore } from "@portcullis/sql";
import type { ModuleContext } from "../context.ts";
import { refuseUnverified } from "../lifecycle.ts";
import { MAX_BODY_BYTES, readBody, readBytes } from "../request_body.ts";
import { json, redirect, render } from "../respond.ts";
import { passwordCheckLimits, recheck, recheckRefusal } from "../recheck.ts";
import type { ApiKeyRow } from "../views/auth/api_keys.ts";

const DAY = 86_400_000;
const SCOPE = /^[A-Za-z][A-Za-z0-9:._-]{0,63}$/;
const KEY_ID = /^[a-z2-7]{16}$/;
const MAX_NAME = 100;
// A name with control characters, or with the invisible and direction-changing
// ones a list could be spoofed with (zero-width, bidirectional overrides and
// isolates, the byte-order mark), is refused.
const CONTROL =
  // deno-lint-ignore no-control-regex -- control characters are what it finds
  /[\u0000-\u001f\u007f-\u009f\u200b-\u200f\u202a-\u202e\u2060-\u2064\u2066-\u2069\ufeff]/;

/** The module's settings, checked once. */
export interface KeySettings {
  /** The scopes a key may be given. */
  scopes: readonly string[];
  /** The default lifetime, days. */
  defaultDays: number;
  /** The longest lifetime, days. */
  maxDays: number;
  /** The most keys per user. */
  maxPerUser: number;
  /** Requests per key per window. */
  requestLimit: { max: number; windowSeconds: number };
  /** The keys' store. */
  store: SQLApiKeyStore;
  /** Mints and resolves keys. */
  keys: ApiKeys;
}

/**
 * Checks the module's options.
 *
 * @param o The options.
 * @returns The settings but the store and the keys.
 * @throws {TypeError} For settings the module cannot use.
 */
export function checkKeySettings(
  o: {
    scopes: readonly string[];
    defaultDays?: number;
    maxDays?: number;
    maxPerUser?: number;
    requestLimit?: { max: number; windowSeconds: number };
  },
): Omit<KeySettings, "store" | "keys"> {
  if (!Array.isArray(o?.scopes) || o.scopes.length === 0) {
    throw new TypeError(
      "apiKeys needs scopes: the policy actions a key may be given, for example apiKeys({ scopes: ['notes:read'] })",
    );
  }
  for (const s of o.scopes) {
    if (typeof s !== "string" || !SCOPE.test(s)) {
      throw new TypeError(
        `apiKeys: a scope is letters, digits and ":._-", starting with a letter, at most 64 characters: received "${
          String(s).slice(0, 70)
        }"`,
      );
    }
  }
  const maxDays = o.maxDays ?? 365;
  const defaultDays = o.defaultDays ?? Math.min(30, maxDays);
  const maxPerUser = o.maxPerUser ?? 25;
  for (
    const [name, n] of [["maxDays", maxDays], ["defaultDays", defaultDays], [
      "maxPerUser",
      maxPerUser,
    ]] as const
  ) {
    if (!Number.isSafeInteger(n) || n < 1) {
      throw new TypeError(
        `apiKeys: ${name} must be a whole number of at least 1: received ${n}`,
      );
    }
  }
  if (maxDays > 3650 || defaultDays > maxDays) {
    throw new TypeError(
      `apiKeys: defaultDays (${defaultDays}) must be at most maxDays (${maxDays}), and maxDays at most 3650`,
    );
  }
  const requestLimit = o.requestLimit ?? { max: 600, windowSeconds: 60 };
  return {
    scopes: [...new Set(o.scopes)],
    defaultDays,
    maxDays,
    maxPerUser,
    requestLimit,
  };
}

/** A key request's fields, as typed. */
interface KeyRequest {
  kind: "form" | "json";
  name: string;
  days: string | number | undefined;
  scopes: unknown;
  password: string | undefined;
}

/**
 * Reads a key request: a form (`name`, `expiresInDays`, a `scope:<name>`
 * checkbox per scope, `password`), or JSON (`name`, `expiresInDays` as a
 * number, `scopes` as an array of strings or a space-separated string,
 * `password`).
 */
async function readKeyRequest(req: Request): Promise<KeyRequest | null> {
  const type = (req.headers.get("content-type") ?? "").toLowerCase();
  if (type.startsWith("application/json")) {
    let data: unknown;
    try {
      const bytes = await readBytes(req, MAX_BODY_BYTES);
      if (bytes === null) return null;
      data = JSON.parse(new TextDecoder().decode(bytes));
    } catch {
      return null;
    }
    if (typeof data !== "object" || data === null || Array.isArray(data)) {
      return null;
    }
    const d = data as Record<string, unknown>;
    return {
      kind: "json",
      name: typeof d.name === "string" ? d.name : "",
      days: typeof d.expiresInDays === "number" ||
          typeof d.expiresInDays === "string"
        ? d.expiresInDays
        : d.expiresInDays === undefined
        ? undefined
        : "invalid",
      scopes: d.scopes,
      password: typeof d.password === "string" ? d.password : undefined,
    };
  }
  const body = await readBody(req);
  if (body === null) return null;
  const scopes = Object.keys(body.fields)
    .filter((k) => k.startsWith("scope:") && body.fields[k] === "on")
    .map((k) => k.slice(6));
  return {
    kind: body.kind,
    name: body.fields.name ?? "",
    days: body.fields.expiresInDays,
    scopes,
    password: body.fields.password,
  };
}

/** A refusal of a key request: its status, code and message. */
type Refusal = { status: number; code: string; message: string };

/** The key's name, lifetime and scopes, or why they are refused. */
function checkKeyRequest(
  settings: KeySettings,
  body: KeyRequest,
): { name: string; days: number; scopes: string[] } | Refusal {
  const name = body.name.trim();
  if (
    name === "" || name.length > MAX_NAME || CONTROL.test(name)
  ) {
    return {
      status: 422,
      code: "invalid_name",
      message: `A key needs a name of 1 to ${MAX_NAME} characters`,
    };
  }
  const days = body.days === undefined || body.days === ""
    ? settings.defaultDays
    : typeof body.days === "number"
    ? body.days
    : /^[1-9]\d{0,4}$/.test(body.days)
    ? Number(body.days)
    : NaN;
  if (!Number.isSafeInteger(days) || days < 1 || days > settings.maxDays) {
    return {
      status: 422,
      code: "invalid_expiry",
      message:
        `A key expires in 1 to ${settings.maxDays} days (default ${settings.defaultDays})`,
    };
  }
  const list = typeof body.scopes === "string"
    ? body.scopes.split(" ").filter((s) => s !== "")
    : Array.isArray(body.scopes) &&
        body.scopes.every((s) => typeof s === "string")
    ? body.scopes as string[]
    : body.scopes === undefined
    ? []
    : null;
  if (
    list === null || list.length > settings.scopes.length ||
    list.some((s) => !settings.scopes.includes(s))
  ) {
    return {
      status: 422,
      code: "invalid_scopes",
      message: `A key's scopes are some of: ${settings.scopes.join(", ")}`,
    };
  }
  return { name, days, scopes: [...new Set(list)] };
}

/** Makes and stores a key; the whole key, shown once. */
async function createKey(
  ctx: ModuleContext,
  settings: KeySettings,
  req: Request,
): Promise<
  | {
    record: SQLApiKeyRecord;
    key: string;
    form: boolean;
  }
  | { refusal: Response | Refusal; form: boolean }
> {
  const subject = currentUser(req)!;
  const body = await readKeyRequest(req);
  if (body === null) {
    return {
      refusal: errorResponse(
        req,
        400,
        "bad_request",
        "Unreadable request body",
      ),
      form: false,
    };
  }
  const form = body.kind === "form";
  // A key is a credential: an unverified account gains none.
  const unverified = await refuseUnverified(ctx, req, subject);
  if (unverified) return { refusal: unverified, form };
  const checked = checkKeyRequest(settings, body);
  if ("status" in checked) return { refusal: checked, form };
  // A stolen session alone must not mint a key that outlives it: the
  // password (or a fresh re-authentication), as for other credentials.
  const outcome = await recheck(
    ctx,
    req,
    subject,
    body.password,
    passwordCheckLimits(ctx, req, subject),
  );
  if (outcome.kind !== "ok") {
    return { refusal: recheckRefusal(req, outcome), form };
  }
  const existing = await settings.store.listFor(subject);
  if (existing.length >= settings.maxPerUser) {
    return {
      refusal: {
        status: 409,
        code: "too_many_keys",
        message:
          `An account holds at most ${settings.maxPerUser} keys: revoke one first`,
      },
      form,
    };
  }
  const now = ctx.now();
  for (let attempt = 0; attempt < 3; attempt++) {
    const minted = await settings.keys.mint();
    const record: SQLApiKeyRecord = {
      id: minted.id,
      subject,
      name: checked.name,
      scopes: checked.scopes,
      createdAt: now,
      expiresAt: now + checked.days * DAY,
      lastUsedAt: 0,
    };
    if (await settings.store.add({ ...record, hash: minted.hash })) {
      await ctx.events.emit("api_key_created", subject, req, {
        detail: `${record.id} ${JSON.stringify(record.name)}`,
      });
      return { record, key: minted.key, form };
    }
  }
  throw new Error("Could not store a new API key: three ids were taken");
}

function keyJson(record: SQLApiKeyRecord, now: number) {
  return {
    id: record.id,
    name: record.name,
    scopes: record.scopes,
    createdAt: new Date(record.createdAt).toISOString(),
    expiresAt: new Date(record.expiresAt).toISOString(),
    lastUsedAt: record.lastUsedAt > 0
      ? new Date(record.lastUsedAt).toISOString()
      : null,
    expired: record.expiresAt <= now,
  };
}

/**
 * The rows of the account page's list.
 *
 * @param ctx The app (its clock).
 * @param records The user's keys.
 * @returns The rows.
 */
export function keyRows(
  ctx: ModuleContext,
  records: SQLApiKeyRecord[],
): ApiKeyRow[] {
  const now = ctx.now();
  return records.map((r) => keyJson(r, now));
}

/** `GET /api/keys`: 200 `{keys: [...]}`, newest first. */
export async function listKeys(
  ctx: ModuleContext,
  settings: KeySettings,
  req: Request,
): Promise<Response> {
  const now = ctx.now();
  const records = await settings.store.listFor(currentUser(req)!);
  return json({ keys: records.map((r) => keyJson(r, now)) });
}

/**
 * `POST /api/keys` (JSON `{name, expiresInDays?, scopes, password}`): 201
 * with the key, shown this once; 422 for a name, a lifetime or scopes it
 * refuses; 409 past the most keys; 403 unverified; the re-check's 401,
 * 403 or 429.
 */
export async function createKeyJson(
  ctx: ModuleContext,
  settings: KeySettings,
  req: Request,
): Promise<Response> {
  const made = await createKey(ctx, settings, req);
  if ("refusal" in made) {
    const r = made.refusal;
    return r instanceof Response
      ? r
      : json({ error: r.code, message: r.message }, r.status);
  }
  return json(
    { ...keyJson(made.record, ctx.now()), key: made.key },
    201,
  );
}

/**
 * `POST /account/keys` (the account page's form): 201 with a page that
 * shows the key once; a refusal as a page with its message.
 */
export async function createKeyForm(
  ctx: ModuleContext,
  settings: KeySettings,
  req: Request,
): Promise<Response> {
  const made = await createKey(ctx, settings, req);
  const email = (await ctx.credentials.findById(currentUser(req)!))?.email ??
    null;
  if ("refusal" in made) {
    const r = made.refusal;
    if (r instanceof Response) return r;
    if (!made.form) {
      return json({ error: r.code, message: r.message }, r.status);
    }
    return render(
      ctx,
      ctx.views.message({
        title: "The key was not created",
        message: r.message,
        email,
      }),
      r.status,
    );
  }
  if (!made.form) {
    return json({ ...keyJson(made.record, ctx.now()), key: made.key }, 201);
  }
  return render(
    ctx,
    ctx.views.apiKeyCreated({
      email: email ?? "",
      key: made.key,
      name: made.record.name,
      scopes: made.record.scopes,
      expiresAt: new Date(made.record.expiresAt).toISOString(),
    }),
    201,
  );
}

async function revokeOne(
  ctx: ModuleContext,
  settings: KeySettings,
  req: Request,
  id: string,
): Promise<boolean> {
  const subject = currentUser(req)!;
  if (!KEY_ID.test(id) || !(await settings.store.remove(subject, id))) {
    return false;
  }
  await ctx.events.emit("api_key_revoked", subject, req, { detail: id });
  return true;
}

/** `DELETE /api/keys/:id`: 204; another user's or an unknown id: 404. */
export async function revokeKey(
  ctx: ModuleContext,
  settings: KeySettings,
  req: Request,
  id: string,
): Promise<Response> {
  if (!(await revokeOne(ctx, settings, req, id))) {
    return errorResponse(req, 404, "not_found", "No such key");
  }
  return new Response(null, { status: 204 });
}

/** `POST /account/keys/revoke` (form `id`): 303 to `/account`; unknown: 404. */
export async function revokeKeyForm(
  ctx: ModuleContext,
  settings: KeySettings,
  req: Request,
): Promise<Response> {
  const id = (await readBody(req))?.fields.id ?? "";
  if (!(await revokeOne(ctx, settings, req, id))) {
    return errorResponse(req, 404, "not_found", "No such key");
  }
  return redirect("/account#api-keys", [
    await ctx.flash.set({ kind: "notice", message: "The key is revoked." }),
  ]);
}
