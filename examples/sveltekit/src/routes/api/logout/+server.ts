import { requireAuthenticated } from "@portcullis/auth";
import type { RequestHandler } from "@sveltejs/kit";
import { endSession } from "$lib/server/auth.ts";

export const POST: RequestHandler = async (event) => {
  const denied = requireAuthenticated(event.request);
  if (denied) return denied;
  await endSession(event);
  return new Response(null, { status: 204 });
};
