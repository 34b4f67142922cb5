/**
 * The modules this project has, one per sign-in method: the only place the
 * app is composed. Adding a method is its folder under `methods/` and one
 * line here; leaving one out is deleting both. The order is the order of
 * their routes, of their sections on `/account` and of their buttons on
 * `/login` (see `module.ts`).
 *
 * @module
 */
import type { AppModule } from "./module.ts";
import { password } from "./methods/password/mod.ts";
import { verification } from "./methods/verification/mod.ts";
import { magicLink } from "./methods/magic_link/mod.ts";
import { totp } from "./methods/totp/mod.ts";
import { oidc } from "./methods/oidc/mod.ts";
import { passkeys } from "./methods/passkeys/mod.ts";
import { deviceBound } from "./methods/device_bound/mod.ts";
import { dpop } from "./methods/dpop/mod.ts";

/** The app's modules. */
export const MODULES: readonly AppModule[] = [
  password,
  verification,
  magicLink,
  totp,
  oidc,
  passkeys,
  deviceBound,
  dpop,
];
