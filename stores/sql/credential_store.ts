/**
 * `SQLCredentialStore`: users in a SQL table through drizzle-orm, on SQLite
 * (libSQL, Turso, D1), PostgreSQL (`postgres`, PGlite) and MySQL/MariaDB.
 *
 * @module
 */
import { type SQL, sql } from "drizzle-orm";
import type { CredentialStore } from "@portcullis/auth";
import type {
  CreateUserResult,
  NewUserRecord,
  UpdateEmailOptions,
  UpdateEmailResult,
  UserRecord,
} from "@portcullis/auth/passwords";
import {
  detectDialect,
  type DrizzleDatabase,
  type SQLDatabase,
  type SQLDialect,
} from "./dialect.ts";
import { execute, mysqlMatched, queryRows, type Row } from "./_exec.ts";
import { schemaGate } from "./_schema_gate.ts";
import { errorMentions, isUniqueViolation, storeError } from "./_errors.ts";
import type { SQLStoreOptions, SQLTableNames } from "./table_names.ts";
import { tableNames } from "./table_names.ts";

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

/**
 * Runs an UPDATE or DELETE and answers how many rows it matched, on every
 * dialect (MySQL has no RETURNING).
 */
async function matched(
  db: DrizzleDatabase,
  dialect: SQLDialect,
  statement: SQL,
): Promise<number> {
  if (dialect === "mysql") return await mysqlMatched(db, statement);
  return (await queryRows(db, dialect, sql`${statement} RETURNING id`)).length;
}

/**
 * A {@linkcode CredentialStore} over a drizzle database. The dialect is
 * detected from the drizzle object, so one line works for every driver:
 * `new SQLCredentialStore(db)`. Create the tables first with `migrate(db)`.
 *
 * The `users` table: `id` text primary key, `email` text unique not null,
 * `password_hash` text not null, `verified_at` integer (Unix ms, `BIGINT`
 * outside SQLite) not null default 0, `created_at` integer not null.
 *
 * Concurrent registrations of one email end in exactly one `created`: the
 * unique index decides, and its violation (SQLite `SQLITE_CONSTRAINT_UNIQUE`,
 * PostgreSQL `23505`, MySQL `ER_DUP_ENTRY`) becomes `{ kind: "emailTaken" }`.
 * Any other database failure throws an `AuthError` with code
 * `"STORE_UNAVAILABLE"` whose message holds no email or hash.
 *
 * @example Usage
 * ```ts
 * import assert from "node:assert/strict";
 * import { drizzle } from "drizzle-orm/libsql";
 * import { migrate, SQLCredentialStore } from "@portcullis/sql";
 * const db = drizzle({ connection: { url: ":memory:" } });
 * await migrate(db);
 * const store = new SQLCredentialStore(db);
 * await store.create({ id: "u1", email: "a@example.com", passwordHash: "$x", createdAt: Date.now() });
 * assert.equal((await store.findByEmail("a@example.com"))?.id, "u1");
 * db.$client.close();
 * ```
 */
export class SQLCredentialStore implements CredentialStore {
  #db: DrizzleDatabase;
  #names: SQLTableNames;
  #table: SQL;
  #gate: () => Promise<void> | undefined;
  /** The dialect the store speaks, detected or given. */
  readonly dialect: SQLDialect;

  /**
   * Makes the store over a drizzle database; the dialect is detected unless
   * `options.dialect` names it. The table must exist (see `migrate`).
   *
   * @param db A drizzle database of any supported dialect.
   * @param options The table prefix, and the dialect if detection is not wanted.
   * @throws {TypeError} When `db` is not a drizzle database or the prefix is invalid.
   *
   * @example Usage
   * ```ts
   * import assert from "node:assert/strict";
   * import { drizzle } from "drizzle-orm/libsql";
   * import { SQLCredentialStore } from "@portcullis/sql";
   * const db = drizzle({ connection: { url: ":memory:" } });
   * const store = new SQLCredentialStore(db, { tablePrefix: "auth_" });
   * assert.equal(store.dialect, "sqlite");
   * db.$client.close();
   * ```
   */
  constructor(db: SQLDatabase, options: SQLStoreOptions = {}) {
    this.#db = db as DrizzleDatabase;
    this.dialect = options.dialect ?? detectDialect(db);
    this.#gate = schemaGate(db, this.dialect, options.tablePrefix ?? "");
    this.#names = tableNames(options.tablePrefix);
    this.#table = sql`${sql.identifier(this.#names.users)}`;
  }

  /**
   * Finds a user by exact (already normalised) email.
   *
   * @param email A normalised email.
   * @returns The user, or `null`.
   * @throws {AuthError} `STORE_UNAVAILABLE` when the query fails.
   *
   * @example Usage
   * ```ts
   * import assert from "node:assert/strict";
   * import { drizzle } from "drizzle-orm/libsql";
   * import { migrate, SQLCredentialStore } from "@portcullis/sql";
   * const db = drizzle({ connection: { url: ":memory:" } });
   * await migrate(db);
   * assert.equal(await new SQLCredentialStore(db).findByEmail("a@example.com"), null);
   * db.$client.close();
   * ```
   */
  async findByEmail(email: string): Promise<UserRecord | null> {
    await this.#gate();
    return await this.#findOne(sql`email = ${email}`);
  }

  /**
   * Finds a user by subject id.
   *
   * @param id A subject id.
   * @returns The user, or `null`.
   * @throws {AuthError} `STORE_UNAVAILABLE` when the query fails.
   */
  async findById(id: string): Promise<UserRecord | null> {
    await this.#gate();
    return await this.#findOne(sql`id = ${id}`);
  }

  /**
   * Inserts a user; the unique index on `email` turns a second registration
   * of one address into `emailTaken`, never an exception.
   *
   * @param user The new user.
   * @returns `created` or `emailTaken`.
   * @throws {AuthError} `STORE_UNAVAILABLE` for any other failure,
   * including a repeated id.
   *
   * @example Usage
   * ```ts
   * import assert from "node:assert/strict";
   * import { drizzle } from "drizzle-orm/libsql";
   * import { migrate, SQLCredentialStore } from "@portcullis/sql";
   * const db = drizzle({ connection: { url: ":memory:" } });
   * await migrate(db);
   * const store = new SQLCredentialStore(db);
   * const user = { id: "u1", email: "a@example.com", passwordHash: "$x", createdAt: 0 };
   * assert.deepEqual(await store.create(user), { kind: "created" });
   * assert.deepEqual(await store.create({ ...user, id: "u2" }), { kind: "emailTaken" });
   * db.$client.close();
   * ```
   */
  async create(user: NewUserRecord): Promise<CreateUserResult> {
    await this.#gate();
    try {
      await execute(
        this.#db,
        this.dialect,
        sql`INSERT INTO ${this.#table} (id, email, password_hash, verified_at, created_at) VALUES (${user.id}, ${user.email}, ${user.passwordHash}, ${0}, ${user.createdAt})`,
      );
      return { kind: "created" };
    } catch (err) {
      if (!isUniqueViolation(err)) throw storeError("Creating a user", err);
      if (
        errorMentions(err, this.#names.usersEmailIndex) ||
        errorMentions(err, `${this.#names.users}.email`)
      ) {
        return { kind: "emailTaken" };
      }
      // A driver that does not name the index: the row decides.
      if (await this.findByEmail(user.email)) return { kind: "emailTaken" };
      throw storeError("Creating a user", err);
    }
  }

  /**
   * Replaces a password hash; with `expected`, only while the stored hash is
   * still that one (a single `UPDATE … WHERE password_hash = ?`, so two
   * concurrent rehashes cannot both win).
   *
   * @param id The subject id.
   * @param passwordHash The new hash.
   * @param expected The hash the caller read, for a compare-and-set.
   * @returns `true` when a row matched.
   * @throws {AuthError} `STORE_UNAVAILABLE` when the query fails.
   *
   * @example Usage
   * ```ts
   * import assert from "node:assert/strict";
   * import { drizzle } from "drizzle-orm/libsql";
   * import { migrate, SQLCredentialStore } from "@portcullis/sql";
   * const db = drizzle({ connection: { url: ":memory:" } });
   * await migrate(db);
   * const store = new SQLCredentialStore(db);
   * await store.create({ id: "u1", email: "a@example.com", passwordHash: "$old", createdAt: 0 });
   * assert.equal(await store.updatePasswordHash("u1", "$new", "$old"), true);
   * assert.equal(await store.updatePasswordHash("u1", "$newer", "$old"), false);
   * db.$client.close();
   * ```
   */
  async updatePasswordHash(
    id: string,
    passwordHash: string,
    expected?: string,
  ): Promise<boolean> {
    await this.#gate();
    const where = expected === undefined
      ? sql`id = ${id}`
      : sql`id = ${id} AND password_hash = ${expected}`;
    return await this.#update(sql`password_hash = ${passwordHash}`, where);
  }

  /**
   * Stamps `verified_at` for a user whose stored email is still `email`.
   *
   * @param id The subject id.
   * @param email The email the verification was sent to.
   * @param at Unix milliseconds, greater than 0.
   * @returns `true` when a row matched.
   * @throws {RangeError} When `at` is not a positive safe integer.
   * @throws {AuthError} `STORE_UNAVAILABLE` when the query fails.
   *
   * @example Usage
   * ```ts
   * import assert from "node:assert/strict";
   * import { drizzle } from "drizzle-orm/libsql";
   * import { migrate, SQLCredentialStore } from "@portcullis/sql";
   * const db = drizzle({ connection: { url: ":memory:" } });
   * await migrate(db);
   * const store = new SQLCredentialStore(db);
   * await store.create({ id: "u1", email: "a@example.com", passwordHash: "$x", createdAt: 0 });
   * assert.equal(await store.markVerified("u1", "a@example.com", Date.now()), true);
   * db.$client.close();
   * ```
   */
  async markVerified(id: string, email: string, at: number): Promise<boolean> {
    await this.#gate();
    if (!Number.isSafeInteger(at) || at <= 0) {
      throw new RangeError(
        `Verification time must be a positive integer of milliseconds: received ${at}`,
      );
    }
    return await this.#update(
      sql`verified_at = ${at}`,
      sql`id = ${id} AND email = ${email}`,
    );
  }

  /**
   * Moves a user to a new address; the unique index makes a race for one
   * address end in exactly one `updated` on every dialect.
   *
   * @param id The subject id.
   * @param email The new, normalised email.
   * @param options `verifiedAt` (default 0) and `expectedEmail`.
   * @returns `updated`, `emailTaken` or `notFound`.
   * @throws {AuthError} `STORE_UNAVAILABLE` for any other failure.
   *
   * @example Usage
   * ```ts
   * import assert from "node:assert/strict";
   * import { drizzle } from "drizzle-orm/libsql";
   * import { migrate, SQLCredentialStore } from "@portcullis/sql";
   * const db = drizzle({ connection: { url: ":memory:" } });
   * await migrate(db);
   * const store = new SQLCredentialStore(db);
   * await store.create({ id: "u1", email: "a@example.com", passwordHash: "$x", createdAt: 0 });
   * assert.deepEqual(await store.updateEmail("u1", "b@example.com"), { kind: "updated" });
   * db.$client.close();
   * ```
   */
  async updateEmail(
    id: string,
    email: string,
    options: UpdateEmailOptions = {},
  ): Promise<UpdateEmailResult> {
    await this.#gate();
    const verifiedAt = options.verifiedAt ?? 0;
    if (!Number.isSafeInteger(verifiedAt) || verifiedAt < 0) {
      throw new RangeError(
        `verifiedAt must be a whole number of milliseconds, 0 or more: received ${verifiedAt}`,
      );
    }
    const where = options.expectedEmail === undefined
      ? sql`id = ${id}`
      : sql`id = ${id} AND email = ${options.expectedEmail}`;
    // The unique index decides a race for one address: the losers'
    // statements fail with a unique violation (SQLite
    // `SQLITE_CONSTRAINT_UNIQUE`, PostgreSQL `23505`, MySQL `ER_DUP_ENTRY`),
    // which becomes `emailTaken`.
    try {
      const n = await matched(
        this.#db,
        this.dialect,
        sql`UPDATE ${this.#table} SET email = ${email}, verified_at = ${verifiedAt} WHERE ${where}`,
      );
      return n > 0 ? { kind: "updated" } : { kind: "notFound" };
    } catch (err) {
      if (!isUniqueViolation(err)) throw storeError("Updating an email", err);
      if (
        errorMentions(err, this.#names.usersEmailIndex) ||
        errorMentions(err, `${this.#names.users}.email`)
      ) {
        return { kind: "emailTaken" };
      }
      // A driver that does not name the index: the row decides.
      let rows;
      try {
        rows = await queryRows(
          this.#db,
          this.dialect,
          sql`SELECT id FROM ${this.#table} WHERE email = ${email}`,
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

  /**
   * Removes a user; the address can be registered again.
   *
   * @param id The subject id.
   * @returns `true` when a row went.
   * @throws {AuthError} `STORE_UNAVAILABLE` when the query fails.
   *
   * @example Usage
   * ```ts
   * import assert from "node:assert/strict";
   * import { drizzle } from "drizzle-orm/libsql";
   * import { migrate, SQLCredentialStore } from "@portcullis/sql";
   * const db = drizzle({ connection: { url: ":memory:" } });
   * await migrate(db);
   * assert.equal(await new SQLCredentialStore(db).deleteUser("u1"), false);
   * db.$client.close();
   * ```
   */
  async deleteUser(id: string): Promise<boolean> {
    await this.#gate();
    try {
      return await matched(
        this.#db,
        this.dialect,
        sql`DELETE FROM ${this.#table} WHERE id = ${id}`,
      ) > 0;
    } catch (err) {
      throw storeError("Deleting a user", err);
    }
  }

  /** The first user matching `where`, or `null`. */
  async #findOne(where: SQL): Promise<UserRecord | null> {
    let rows: Row[];
    try {
      rows = await queryRows(
        this.#db,
        this.dialect,
        sql`SELECT ${USER_COLUMNS} FROM ${this.#table} WHERE ${where}`,
      );
    } catch (err) {
      throw storeError("Reading a user", err);
    }
    return rows.length > 0 ? toUser(rows[0]) : null;
  }

  /** Updates the users matching `where`; `true` when one matched. */
  async #update(set: SQL, where: SQL): Promise<boolean> {
    try {
      return await matched(
        this.#db,
        this.dialect,
        sql`UPDATE ${this.#table} SET ${set} WHERE ${where}`,
      ) > 0;
    } catch (err) {
      throw storeError("Updating a user", err);
    }
  }
}
