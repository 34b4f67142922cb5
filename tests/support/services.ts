/**
 * Test support: how a test that needs an outside service (PostgreSQL,
 * MariaDB, Redis, Chromium) behaves when the service is missing. Under
 * `CI=true` the test fails; elsewhere it prints `SKIPPED: <why>` and passes
 * without asserting anything else.
 *
 * @module
 */

/** True when running under CI, where a missing service is a failure. */
export const inCI: boolean = Deno.env.get("CI") === "true";

/**
 * Reports a missing service: throws under CI, prints `SKIPPED:` elsewhere.
 *
 * @param why What is missing, for the log line.
 * @returns `false`, so callers can write `if (!(await ...)) return;`.
 */
export function missing(why: string): false {
  if (inCI) throw new Error(`Required service is missing under CI: ${why}`);
  console.log(`SKIPPED: ${why}`);
  return false;
}

/**
 * Checks that something listens on a TCP port of 127.0.0.1.
 *
 * @param port The port.
 * @returns `true` when a connection opened.
 */
export async function tcpReachable(port: number): Promise<boolean> {
  try {
    const conn = await Deno.connect({ hostname: "127.0.0.1", port });
    conn.close();
    return true;
  } catch {
    return false;
  }
}

/**
 * Requires a TCP service; see {@linkcode missing}.
 *
 * @param name The service, for the log line.
 * @param port Its port on 127.0.0.1.
 * @returns `true` when reachable.
 */
export async function requireTcp(name: string, port: number): Promise<boolean> {
  if (await tcpReachable(port)) return true;
  return missing(`${name} is not reachable on 127.0.0.1:${port}`);
}
