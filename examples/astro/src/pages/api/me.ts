import type { APIRoute } from "astro";
import { requireAuthenticated } from "@portcullis/auth";
import { credentials } from "../../lib/app.ts";

export const GET: APIRoute = async ({ request, locals }) => {
  const denied = requireAuthenticated(request); // 401, or 503 if the store is down
  if (denied) return denied;
  const user = await credentials.findById(locals.user!);
  return Response.json({ subject: locals.user, email: user?.email ?? null });
};
