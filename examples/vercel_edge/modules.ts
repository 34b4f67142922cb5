/**
 * The project's configuration: which modules the app has, in order. The
 * order is the order of their routes, of their sections on `/account` and
 * of their buttons on `/login`. Each optional module's settings are in its
 * file under `modules/`; leaving one out is deleting its file and its line
 * here (the scaffold's `--no-<name>`).
 *
 * Every on/off setting takes `1`, `true`, `yes`, `on` or `0`, `false`, `no`,
 * `off` in any case; any other value stops the start. `SIGN_IN_METHODS=off`
 * leaves the password as the only sign-in method. `DPOP=off` turns
 * DPoP-bound API sessions off (on by default). `API_KEYS=off` and
 * `CONSOLE=off` leave API keys and the operator's console out;
 * `OPERATORS` lists the operators' addresses.
 *
 * @module
 */
import {
  type AccountsModule,
  dpop,
  envFlag,
  password,
} from "@portcullis/accounts";
import { verificationModule } from "./modules/verification.ts";
import { magicLinkModule } from "./modules/magic_link.ts";
import { totpModule } from "./modules/totp.ts";
import { oidcModule } from "./modules/oidc.ts";
import { passkeysModule } from "./modules/passkeys.ts";
import { deviceBoundModule } from "./modules/device_bound.ts";
import { apiKeysModule } from "./modules/api_keys.ts";
import { operatorConsoleModule } from "./modules/operator_console.ts";
import { notes } from "./notes.ts";

/**
 * The app's modules for an environment.
 *
 * @param env The environment (or any map of settings).
 * @returns The modules, in order.
 * @throws {TypeError} For an on/off setting that is neither.
 */
export function modules(
  env: Record<string, string | undefined>,
): AccountsModule[] {
  return [
    password(),
    ...verificationModule(env),
    ...magicLinkModule(env),
    ...totpModule(env),
    ...oidcModule(env),
    ...passkeysModule(env),
    ...deviceBoundModule(env),
    ...envFlag(env, "DPOP", true) ? [dpop()] : [],
    ...apiKeysModule(env),
    ...operatorConsoleModule(env),
    notes(),
  ];
}
