import { json } from "@sveltejs/kit";
import { requireAuthenticated } from "@portcullis/auth";
import type { RequestHandler } from "@sveltejs/kit";
import { credentials } from "$lib/server/app.ts";

export const GET: RequestHandler = async ({ request, locals }) => {
  const denied = requireAuthenticated(request); // 401, or 503 if the store is down
  if (denied) return denied;
  const user = await credentials.findById(locals.user!);
  return json({ subject: locals.user, email: user?.email ?? null });
};
