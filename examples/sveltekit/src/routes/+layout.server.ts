import type { LayoutServerLoad } from "./$types";
import { credentials } from "$lib/server/app";

export const load: LayoutServerLoad = async ({ locals }) => ({
  email: locals.user
    ? (await credentials.findById(locals.user))?.email ?? null
    : null,
});
