/**
 * Device-bound browser sessions (W3C DBSC): a browser able to bind
 * (Chromium over https) renews a 10-minute cookie with its key, so a copied
 * cookie dies within minutes. Leaving this file out (the scaffold's
 * `--no-device-bound`) means an app that binds nothing.
 *
 * @module
 */
import { type AccountsModule, deviceBound } from "@portcullis/accounts";

/**
 * The device-bound sessions module.
 *
 * @param _env The environment (it has no settings).
 * @returns The module.
 */
export function deviceBoundModule(
  _env: Record<string, string | undefined>,
): AccountsModule[] {
  return [deviceBound()];
}
