import { requireAuthenticated } from "@portcullis/auth";
import type { RequestHandler } from "./$types";
import { endSession } from "$lib/server/auth";

export const POST: RequestHandler = async (event) => {
  const denied = requireAuthenticated(event.request);
  if (denied) return denied;
  await endSession(event);
  return new Response(null, { status: 204 });
};
