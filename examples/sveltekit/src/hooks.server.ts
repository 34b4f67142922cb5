import { handleAuth } from "$lib/server/auth.ts";

// With more hooks, combine them: `sequence(handleAuth, other)` from
// @sveltejs/kit/hooks (handleAuth first, so the others see locals.user).
export const handle = handleAuth;
