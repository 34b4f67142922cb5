// Reading and updating one row of the users table, for SQLCredentialStore:
// the column list, the row-to-record mapping, and an UPDATE that reports
// whether a row matched on every dialect (MySQL has no RETURNING).
import { type SQL, sql } from "drizzle-orm";
import type { UserRecord } from "@portcullis/auth/passwords";
import type { DrizzleDatabase, SQLDialect } from "./dialect.ts";
import { mysqlMatched, queryRows, type Row } from "./_exec.ts";
import { storeError } from "./_errors.ts";

const USER_COLUMNS = sql.raw(
  "id, email, password_hash, verified_at, created_at",
);

function toUser(row: Row): UserRecord {
  return {
    id: String(row.id),
    email: String(row.email),
    passwordHash: String(row.password_hash),
    verifiedAt: Number(row.verified_at),
    createdAt: Number(row.created_at),
  };
}

/** The first user matching `where`, or `null`. */
export async function findUser(
  db: DrizzleDatabase,
  dialect: SQLDialect,
  table: SQL,
  where: SQL,
): Promise<UserRecord | null> {
  let rows: Row[];
  try {
    rows = await queryRows(
      db,
      dialect,
      sql`SELECT ${USER_COLUMNS} FROM ${table} WHERE ${where}`,
    );
  } catch (err) {
    throw storeError("Reading a user", err);
  }
  return rows.length > 0 ? toUser(rows[0]) : null;
}

/** Updates the users matching `where`; `true` when one matched. */
export async function updateUser(
  db: DrizzleDatabase,
  dialect: SQLDialect,
  table: SQL,
  set: SQL,
  where: SQL,
): Promise<boolean> {
  try {
    if (dialect === "mysql") {
      const matched = await mysqlMatched(
        db,
        sql`UPDATE ${table} SET ${set} WHERE ${where}`,
      );
      return matched > 0;
    }
    const rows = await queryRows(
      db,
      dialect,
      sql`UPDATE ${table} SET ${set} WHERE ${where} RETURNING id`,
    );
    return rows.length > 0;
  } catch (err) {
    throw storeError("Updating a user", err);
  }
}
