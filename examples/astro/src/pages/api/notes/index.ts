import type { APIRoute } from "astro";
import { requireAuthenticated } from "@portcullis/auth";
import { notes } from "../../../lib/app.ts";

export const POST: APIRoute = async ({ request, locals }) => {
  const denied = requireAuthenticated(request);
  if (denied) return denied;
  const body = await request.json().catch(() => null);
  if (typeof body?.text !== "string") {
    return Response.json({ error: "invalid_request", message: "Send {text}" }, {
      status: 400,
    });
  }
  const id = crypto.randomUUID();
  notes.set(id, { owner: locals.user!, text: body.text });
  return Response.json({ id }, { status: 201 });
};
