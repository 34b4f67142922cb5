/**
 * Reading an app's configuration from its environment: yes-or-no settings
 * that stop the start on a typo, and the switches of the sign-in methods
 * (`TOTP=off`, `SIGN_IN_METHODS=off`, …) a project's configuration reads
 * before it lists its modules.
 *
 * @module
 */

/**
 * Whether the environment turns every sign-in method beside the password
 * off (`SIGN_IN_METHODS=off`: password only), whatever their own settings
 * say. The value is read as {@linkcode envFlag} reads one, on when unset.
 *
 * @param env The environment.
 * @returns `true` when they are all off.
 * @throws {TypeError} For a value that is neither yes nor no.
 */
export function allMethodsOff(
  env: Record<string, string | undefined>,
): boolean {
  return !envFlag(env, "SIGN_IN_METHODS", true);
}

/**
 * Whether a sign-in method that is on by default stays on: neither its own
 * switch (`name`, for example `TOTP=off`) nor `SIGN_IN_METHODS=off` turns it
 * off. Both are read as {@linkcode envFlag} reads a value.
 *
 * @param env The environment.
 * @param name The method's switch.
 * @returns `true` when the method is on.
 * @throws {TypeError} For a value that is neither yes nor no.
 */
export function methodOn(
  env: Record<string, string | undefined>,
  name: string,
): boolean {
  // Both are read, so a typo in either stops the start.
  const own = envFlag(env, name, true);
  return !allMethodsOff(env) && own;
}

const YES = ["1", "true", "yes", "on"];
const NO = ["0", "false", "no", "off"];

/**
 * A yes-or-no setting of the environment: `1`, `true`, `yes` and `on` are
 * yes, `0`, `false`, `no` and `off` are no, in any case and with spaces
 * around; unset or empty is `fallback`. Anything else stops the start: a
 * typo must not be read as "no" (or "yes") without a word.
 *
 * @example Usage
 * ```ts ignore
 * const allowHttp = envFlag(env, "OIDC_ALLOW_HTTP"); // "Yes" → true
 * ```
 *
 * @param env The environment.
 * @param name The variable's name.
 * @param fallback The value when it is unset or empty.
 * @returns The setting.
 * @throws {TypeError} For a value that is neither yes nor no, naming the
 * variable and the values it takes.
 */
export function envFlag(
  env: Record<string, string | undefined>,
  name: string,
  fallback = false,
): boolean {
  const value = (env[name] ?? "").trim().toLowerCase();
  if (value === "") return fallback;
  if (YES.includes(value)) return true;
  if (NO.includes(value)) return false;
  throw new TypeError(
    `${name} must be one of ${YES.join(", ")} (yes) or ${
      NO.join(", ")
    } (no), in any case: received "${env[name]!.slice(0, 32)}"`,
  );
}
