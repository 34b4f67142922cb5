/**
 * Test support: the device-bound-session options a conformance entry takes
 * from its bindings. `DBSC_COOKIE_LIFETIME` (seconds) shortens the bound
 * cookie's life, so the Chromium test (tests/browser/dbsc_browser_test.ts)
 * sees it expire; unset, the reference app's defaults hold. Web APIs only:
 * it is bundled into the edge and Workers builds.
 *
 * @module
 */
/**
 * The entry's `deviceBound` overrides.
 *
 * @param env The bindings (environment variables, or a Workers `env`).
 * @returns `{ cookieLifetime }` when `DBSC_COOKIE_LIFETIME` is set, else
 * nothing to override.
 */
export function deviceBoundFromEnv(
  env: Record<string, unknown>,
): { cookieLifetime?: number } {
  const life = env.DBSC_COOKIE_LIFETIME;
  return typeof life === "string" && life !== ""
    ? { cookieLifetime: Number(life) }
    : {};
}
