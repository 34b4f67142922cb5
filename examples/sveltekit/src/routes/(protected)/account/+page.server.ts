import type { PageServerLoad } from "./$types";

// handleAuth already refused anonymous requests to the (protected) group:
// here locals.user is a subject id.
export const load: PageServerLoad = ({ locals }) => ({
  subject: locals.user!,
});
