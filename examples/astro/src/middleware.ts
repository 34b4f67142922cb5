import { authMiddleware } from "./lib/auth.ts";

// With more middleware, combine them: `sequence(authMiddleware, other)` from
// astro:middleware (authMiddleware first, so the others see locals.user).
export const onRequest = authMiddleware;
