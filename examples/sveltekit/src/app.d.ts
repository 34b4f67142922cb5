// The types of `event.locals`, filled by `handle` in hooks.server.ts.
declare global {
  namespace App {
    interface Locals {
      /** The signed-in user, or `null`. */
      user: { id: string; email: string } | null;
    }
  }
}

export {};
