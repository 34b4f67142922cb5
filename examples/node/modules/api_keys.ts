/**
 * API keys (personal access tokens): a signed-in user makes a key on
 * `/account` (or `POST /api/keys`) for a script or a CI job, with a name,
 * an expiry and some of the notes API's actions as its scopes; the key
 * calls the notes API as `Authorization: Bearer pc_…`. `API_KEYS=off`
 * turns keys off; `API_KEY_MAX_DAYS` is the longest lifetime (default 365).
 * Leaving this file out (the scaffold's `--no-api-keys`) means an app
 * without keys.
 *
 * @module
 */
import { type AccountsModule, apiKeys, envFlag } from "@portcullis/accounts";
import { NOTE_ACTIONS } from "../notes.ts";

/**
 * The API keys module, unless its switch is off.
 *
 * @param env The environment.
 * @returns The module, or none.
 * @throws {TypeError} For a switch that is neither yes nor no, or a
 * maximum lifetime that is not a whole number of days.
 */
export function apiKeysModule(
  env: Record<string, string | undefined>,
): AccountsModule[] {
  if (!envFlag(env, "API_KEYS", true)) return [];
  const maxDays = env.API_KEY_MAX_DAYS === undefined
    ? 365
    : Number(env.API_KEY_MAX_DAYS);
  return [apiKeys({ scopes: NOTE_ACTIONS, maxDays })];
}
