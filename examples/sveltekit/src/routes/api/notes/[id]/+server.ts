import { json } from "@sveltejs/kit";
import { authorize, requireAuthenticated } from "@portcullis/auth";
import type { RequestHandler } from "@sveltejs/kit";
import { notePolicy, notes } from "$lib/server/app.ts";

export const GET: RequestHandler<{ id: string }> = async (
  { request, params },
) => {
  const denied = requireAuthenticated(request) ??
    await authorize(request, notePolicy, "view", params.id);
  if (denied) return denied;
  return json({ id: params.id, ...notes.get(params.id) });
};

export const PUT: RequestHandler<{ id: string }> = async (
  { request, params },
) => {
  const denied = requireAuthenticated(request) ??
    await authorize(request, notePolicy, "edit", params.id); // 403 for a non-owner
  if (denied) return denied;
  const body = await request.json().catch(() => null);
  if (typeof body?.text !== "string") {
    return json({ error: "invalid_request", message: "Send {text}" }, {
      status: 400,
    });
  }
  notes.get(params.id)!.text = body.text;
  return json({ id: params.id, text: body.text });
};
