// The types of `context.locals` (`Astro.locals`), filled by src/middleware.ts.
declare namespace App {
  interface Locals {
    /** The signed-in user, or `null`. */
    user: { id: string; email: string } | null;
  }
}
