/**
 * The JSON API: `GET /api/me` and the notes resource.
 *
 * @module
 */
import { authorize, currentUser, errorResponse } from "@portcullis/auth";
import type { AppContext } from "../../context.ts";
import { MAX_NOTE_LENGTH, type Note } from "./notes.ts";
import { readBody } from "../../request_body.ts";
import { json } from "../../respond.ts";
import { signedInUser } from "../../routes/pages.ts";

/** `GET /api/me`: 200 `{subject, email, verified}`; 401 anonymous. */
export async function me(ctx: AppContext, req: Request): Promise<Response> {
  const user = await signedInUser(ctx, req);
  if (user === null) {
    return errorResponse(req, 401, "unauthenticated", "Sign in to continue");
  }
  return json({
    subject: user.subject,
    email: user.email,
    verified: user.verified,
  });
}

/** `POST /api/notes` `{text}`: 201 `{id}`; 401 anonymous; 403 unverified. */
export async function createNote(
  ctx: AppContext,
  req: Request,
): Promise<Response> {
  for (const m of ctx.modules) {
    const refused = await m.beforeWrite?.(req);
    if (refused) return refused;
  }
  const text = await noteText(req);
  if (text === null) return invalidText(req);
  const note = await ctx.notes.create(currentUser(req)!, text);
  return json({ id: note.id }, 201, { location: `/api/notes/${note.id}` });
}

/** `GET /api/notes/:id`: 200 for any signed-in user; 401 anonymous. */
export async function getNote(
  ctx: AppContext,
  req: Request,
  id: string,
): Promise<Response> {
  const note = await allowedNote(ctx, req, id, "view");
  if (note instanceof Response) return note;
  return json(note);
}

/** `PUT /api/notes/:id` `{text}`: 200 for the owner, 403 otherwise. */
export async function putNote(
  ctx: AppContext,
  req: Request,
  id: string,
): Promise<Response> {
  const note = await allowedNote(ctx, req, id, "edit");
  if (note instanceof Response) return note;
  const text = await noteText(req);
  if (text === null) return invalidText(req);
  const updated = { ...note, text };
  await ctx.notes.update(updated);
  return json(updated);
}

async function noteText(req: Request): Promise<string | null> {
  const body = await readBody(req);
  const text = body?.fields.text;
  if (typeof text !== "string" || text.trim() === "") return null;
  return text.length > MAX_NOTE_LENGTH ? null : text;
}

function invalidText(req: Request): Response {
  return errorResponse(
    req,
    422,
    "invalid_text",
    `A note needs text of 1 to ${MAX_NOTE_LENGTH} characters`,
  );
}

function notFound(req: Request): Response {
  return errorResponse(req, 404, "not_found", "No such note");
}

/** The note, when the signed-in user may `action` it; else 404 or 403. */
async function allowedNote(
  ctx: AppContext,
  req: Request,
  id: string,
  action: "view" | "edit",
): Promise<Note | Response> {
  const note = await ctx.notes.find(id);
  if (note === null) return notFound(req);
  return await authorize(req, ctx.notePolicy, action, note.id) ?? note;
}
