/**
 * The operator's console at `/console`: find a user by email, see their
 * account, ban or unban them, sign out their sessions, act as them for 15
 * minutes. Who is an operator is this app's decision: here, the verified
 * accounts whose address `OPERATORS` lists (comma-separated); with none,
 * nobody is. To everyone else every console path answers 404. `CONSOLE=off`
 * leaves the console out. Leaving this file out (the scaffold's
 * `--no-operator-console`) means an app without it.
 *
 * @module
 */
import {
  type AccountsModule,
  envFlag,
  operatorConsole,
} from "@portcullis/accounts";

/**
 * The console, unless its switch is off.
 *
 * @param env The environment.
 * @returns The module, or none.
 * @throws {TypeError} For a switch that is neither yes nor no.
 */
export function operatorConsoleModule(
  env: Record<string, string | undefined>,
): AccountsModule[] {
  if (!envFlag(env, "CONSOLE", true)) return [];
  const operators = new Set(
    (env.OPERATORS ?? "").split(",").map((e) => e.trim().toLowerCase())
      .filter((e) => e !== ""),
  );
  return [
    operatorConsole({
      // An unverified account's address belongs to nobody yet.
      isOperator: (user) => user.verified && operators.has(user.email),
    }),
  ];
}
