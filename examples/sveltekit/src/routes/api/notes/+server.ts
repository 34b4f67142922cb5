import { json } from "@sveltejs/kit";
import { requireAuthenticated } from "@portcullis/auth";
import type { RequestHandler } from "@sveltejs/kit";
import { notes } from "$lib/server/app.ts";

export const POST: RequestHandler = async ({ request, locals }) => {
  const denied = requireAuthenticated(request);
  if (denied) return denied;
  const body = await request.json().catch(() => null);
  if (typeof body?.text !== "string") {
    return json({ error: "invalid_request", message: "Send {text}" }, {
      status: 400,
    });
  }
  const id = crypto.randomUUID();
  notes.set(id, { owner: locals.user!, text: body.text });
  return json({ id }, { status: 201 });
};
