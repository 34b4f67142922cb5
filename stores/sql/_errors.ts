/**
 * Reading driver errors: unique-key violations on every dialect, and a
 * store failure that carries no query parameters. Internal to `stores/sql`.
 *
 * @module
 */
import { AuthError } from "@portcullis/auth";

/** The error and its `cause` chain (drizzle wraps driver errors). */
function chain(err: unknown): Record<string, unknown>[] {
  const out: Record<string, unknown>[] = [];
  let e: unknown = err;
  while (typeof e === "object" && e !== null && out.length < 8) {
    out.push(e as Record<string, unknown>);
    e = (e as { cause?: unknown }).cause;
  }
  return out;
}

const UNIQUE_CODES = new Set([
  "SQLITE_CONSTRAINT_UNIQUE", // SQLite, libSQL (extended code)
  "SQLITE_CONSTRAINT_PRIMARYKEY",
  "23505", // PostgreSQL unique_violation (postgres, PGlite, pg)
  "ER_DUP_ENTRY", // MySQL, MariaDB (mysql2)
]);

/**
 * True when a driver error (or one in its `cause` chain) is a unique-key
 * violation: SQLite `SQLITE_CONSTRAINT_UNIQUE`, PostgreSQL `23505`, MySQL
 * `ER_DUP_ENTRY` (errno 1062), or D1's "UNIQUE constraint failed" text.
 */
export function isUniqueViolation(err: unknown): boolean {
  return chain(err).some((e) =>
    UNIQUE_CODES.has(String(e.code)) ||
    UNIQUE_CODES.has(String(e.extendedCode)) ||
    e.errno === 1062 ||
    /UNIQUE constraint failed/.test(String(e.message))
  );
}

/**
 * True when any text the driver gave about the error (message, constraint
 * name, detail) names `needle`, such as the email index.
 */
export function errorMentions(err: unknown, needle: string): boolean {
  return chain(err).some((e) =>
    [e.message, e.constraint_name, e.constraint, e.detail, e.sqlMessage]
      .some((text) => typeof text === "string" && text.includes(needle))
  );
}

/**
 * Wraps a driver failure in an `AuthError` with code `STORE_UNAVAILABLE`.
 * drizzle's own wrapper prints the query parameters (emails, hashes), so
 * only the innermost driver error's code and message are kept, and that
 * error becomes the cause.
 */
export function storeError(what: string, err: unknown): AuthError {
  const all = chain(err);
  const inner = all.at(-1);
  const code = inner?.code ?? inner?.name ?? "unknown";
  const message =
    typeof inner?.message === "string" && !/^Failed query:/.test(inner.message)
      ? inner.message.slice(0, 200)
      : "";
  return new AuthError(
    "STORE_UNAVAILABLE",
    `${what} failed: ${code}${message ? ` (${message})` : ""}`,
    { cause: inner, reason: "failed" },
  );
}
