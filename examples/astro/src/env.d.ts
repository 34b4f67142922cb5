// The types of `context.locals` (`Astro.locals`), filled by src/middleware.ts.
declare namespace App {
  interface Locals {
    /** The signed-in subject id, or `null`. */
    user: string | null;
    /** The verified session (subject, jti, expiry), or `null`. */
    identity: import("@portcullis/auth").Identity | null;
  }
}
