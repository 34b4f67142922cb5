import type { ServerLoad } from "@sveltejs/kit";
import { credentials } from "$lib/server/app.ts";

export const load: ServerLoad = async ({ locals }) => ({
  email: locals.user
    ? (await credentials.findById(locals.user))?.email ?? null
    : null,
});
