/**
 * Moving a user to a new address and removing a user, on every dialect.
 * Internal to `stores/sql`.
 *
 * @module
 */
import { type SQL, sql } from "drizzle-orm";
import type {
  UpdateEmailOptions,
  UpdateEmailResult,
} from "@portcullis/auth/passwords";
import type { DrizzleDatabase, SQLDialect } from "./dialect.ts";
import { mysqlMatched, queryRows } from "./_exec.ts";
import { errorMentions, isUniqueViolation, storeError } from "./_errors.ts";
import type { SQLTableNames } from "./table_names.ts";

/** Runs an UPDATE or DELETE and answers how many rows it matched. */
async function matched(
  db: DrizzleDatabase,
  dialect: SQLDialect,
  statement: SQL,
): Promise<number> {
  if (dialect === "mysql") return await mysqlMatched(db, statement);
  return (await queryRows(db, dialect, sql`${statement} RETURNING id`)).length;
}

/**
 * `UPDATE users SET email, verified_at WHERE id [AND email = expected]`.
 * The unique index decides a race for one address: the losers' statements
 * fail with a unique violation (SQLite `SQLITE_CONSTRAINT_UNIQUE`,
 * PostgreSQL `23505`, MySQL `ER_DUP_ENTRY`), which becomes `emailTaken`.
 */
export async function updateUserEmail(
  db: DrizzleDatabase,
  dialect: SQLDialect,
  names: SQLTableNames,
  input: { id: string; email: string; options: UpdateEmailOptions },
): Promise<UpdateEmailResult> {
  const { id, email, options } = input;
  const verifiedAt = options.verifiedAt ?? 0;
  if (!Number.isSafeInteger(verifiedAt) || verifiedAt < 0) {
    throw new RangeError(
      `verifiedAt must be a whole number of milliseconds, 0 or more: received ${verifiedAt}`,
    );
  }
  const table = sql.identifier(names.users);
  const where = options.expectedEmail === undefined
    ? sql`id = ${id}`
    : sql`id = ${id} AND email = ${options.expectedEmail}`;
  try {
    const n = await matched(
      db,
      dialect,
      sql`UPDATE ${table} SET email = ${email}, verified_at = ${verifiedAt} WHERE ${where}`,
    );
    return n > 0 ? { kind: "updated" } : { kind: "notFound" };
  } catch (err) {
    if (!isUniqueViolation(err)) throw storeError("Updating an email", err);
    if (
      errorMentions(err, names.usersEmailIndex) ||
      errorMentions(err, `${names.users}.email`)
    ) {
      return { kind: "emailTaken" };
    }
    // A driver that does not name the index: the row decides.
    let rows;
    try {
      rows = await queryRows(
        db,
        dialect,
        sql`SELECT id FROM ${table} WHERE email = ${email}`,
      );
    } catch (again) {
      throw storeError("Updating an email", again);
    }
    if (rows.length > 0 && String(rows[0].id) !== id) {
      return { kind: "emailTaken" };
    }
    throw storeError("Updating an email", err);
  }
}

/** `DELETE FROM users WHERE id = ?`; `true` when a row went. */
export async function deleteUserRow(
  db: DrizzleDatabase,
  dialect: SQLDialect,
  names: SQLTableNames,
  id: string,
): Promise<boolean> {
  try {
    return await matched(
      db,
      dialect,
      sql`DELETE FROM ${sql.identifier(names.users)} WHERE id = ${id}`,
    ) > 0;
  } catch (err) {
    throw storeError("Deleting a user", err);
  }
}
