// Every account flow: /login, /register, /verify, /password/…, /account,
// /api/me, … — any path no page of the app's own takes.
import type { APIRoute } from "astro";
import { portcullis } from "../lib/auth";

export const prerender = false;

export const ALL: APIRoute = async ({ request, clientAddress }) => {
  const { flows } = await portcullis();
  return flows.fetch(request, clientAddress);
};
