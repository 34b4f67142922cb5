// The types of `event.locals`, filled by `handle` in hooks.server.ts.
import type { Identity } from "@portcullis/auth";

declare global {
  namespace App {
    interface Locals {
      /** The signed-in subject id, or `null`. */
      user: string | null;
      /** The verified session (subject, jti, expiry), or `null`. */
      identity: Identity | null;
    }
  }
}

export {};
