import type { APIRoute } from "astro";
import { endSession } from "../lib/auth.ts";

export const POST: APIRoute = async (context) => {
  await endSession(context);
  return context.redirect("/login", 303);
};
