import { redirect } from "@sveltejs/kit";
import type { PageServerLoad } from "./$types";

export const load: PageServerLoad = ({ locals }) => {
  if (locals.user === null) redirect(303, "/login");
  return { email: locals.user.email };
};
