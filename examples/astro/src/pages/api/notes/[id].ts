import type { APIRoute } from "astro";
import { authorize, requireAuthenticated } from "@portcullis/auth";
import { notePolicy, notes } from "../../../lib/app.ts";

export const GET: APIRoute = async ({ request, params }) => {
  const id = params.id!;
  const denied = requireAuthenticated(request) ??
    await authorize(request, notePolicy, "view", id);
  if (denied) return denied;
  return Response.json({ id, ...notes.get(id) });
};

export const PUT: APIRoute = async ({ request, params }) => {
  const id = params.id!;
  const denied = requireAuthenticated(request) ??
    await authorize(request, notePolicy, "edit", id); // 403 for a non-owner
  if (denied) return denied;
  const body = await request.json().catch(() => null);
  if (typeof body?.text !== "string") {
    return Response.json({ error: "invalid_request", message: "Send {text}" }, {
      status: 400,
    });
  }
  notes.get(id)!.text = body.text;
  return Response.json({ id, text: body.text });
};
