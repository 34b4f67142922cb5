import { currentUser, errorResponse, requireAuth } from "@portcullis/auth";
import { auth, notes } from "../../../lib/auth";

// The signed-in user's notes.
export const GET = auth.route((req: Request) => {
  const me = currentUser(req)!;
  return Response.json([...notes.values()].filter((n) => n.owner === me));
}, requireAuth());

// `{text}` → 201 with the new note.
export const POST = auth.route(async (req: Request) => {
  const body = await req.json().catch(() => null);
  if (typeof body?.text !== "string" || body.text.length > 1000) {
    return errorResponse(req, 400, "invalid_input", "Send a text of at most 1000 characters");
  }
  const note = { id: crypto.randomUUID(), owner: currentUser(req)!, text: body.text };
  notes.set(note.id, note);
  return Response.json(note, { status: 201 });
}, requireAuth());
