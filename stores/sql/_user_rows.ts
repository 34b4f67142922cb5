/**
 * The user-row queries behind `SQLCredentialStore`: read one user, insert
 * one (telling a taken address from any other failure), update rows.
 *
 * @module
 */
import { type SQL, sql } from "drizzle-orm";
import type {
  CreateUserResult,
  NewUserRecord,
  UserRecord,
} from "@portcullis/auth/passwords";
import type { DrizzleDatabase, SQLDialect } from "./dialect.ts";
import { execute, mysqlMatched, queryRows, type Row } from "./_exec.ts";
import { errorMentions, isUniqueViolation, storeError } from "./_errors.ts";
import type { SQLTableNames } from "./migrations.ts";

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

/** Inserts a user; a unique violation on the email is `emailTaken`. */
export async function insertUser(
  db: DrizzleDatabase,
  dialect: SQLDialect,
  names: SQLTableNames,
  user: NewUserRecord,
): Promise<CreateUserResult> {
  const table = sql`${sql.identifier(names.users)}`;
  try {
    await execute(
      db,
      dialect,
      sql`INSERT INTO ${table} (id, email, password_hash, verified_at, created_at) VALUES (${user.id}, ${user.email}, ${user.passwordHash}, ${0}, ${user.createdAt})`,
    );
    return { kind: "created" };
  } catch (err) {
    if (!isUniqueViolation(err)) throw storeError("Creating a user", err);
    if (
      errorMentions(err, names.usersEmailIndex) ||
      errorMentions(err, `${names.users}.email`)
    ) {
      return { kind: "emailTaken" };
    }
    // A driver that does not name the index: the row decides.
    if (await findUser(db, dialect, table, sql`email = ${user.email}`)) {
      return { kind: "emailTaken" };
    }
    throw storeError("Creating a user", err);
  }
}

/** Runs `UPDATE table SET set WHERE where`; `true` when a row matched. */
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
