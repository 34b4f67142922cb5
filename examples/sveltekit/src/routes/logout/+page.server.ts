import { redirect } from "@sveltejs/kit";
import type { Actions } from "./$types";
import { endSession } from "$lib/server/auth";

export const actions = {
  default: async (event) => {
    await endSession(event);
    redirect(303, "/login");
  },
} satisfies Actions;
