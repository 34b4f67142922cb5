import type { ServerLoad } from "@sveltejs/kit";

// handleAuth already refused anonymous requests to the (protected) group:
// here locals.user is a subject id.
export const load: ServerLoad = ({ locals }) => ({
  subject: locals.user!,
});
