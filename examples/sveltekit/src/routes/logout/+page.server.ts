import { redirect } from "@sveltejs/kit";
import type { Actions } from "@sveltejs/kit";
import { endSession } from "$lib/server/auth.ts";

export const actions = {
  default: async (event) => {
    await endSession(event);
    redirect(303, "/login");
  },
} satisfies Actions;
