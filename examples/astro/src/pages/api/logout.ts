import type { APIRoute } from "astro";
import { requireAuthenticated } from "@portcullis/auth";
import { endSession } from "../../lib/auth.ts";

export const POST: APIRoute = async (context) => {
  const denied = requireAuthenticated(context.request);
  if (denied) return denied;
  await endSession(context);
  return new Response(null, { status: 204 });
};
