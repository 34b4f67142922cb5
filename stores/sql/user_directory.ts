/**
 * `SQLUserDirectory`: the users table read as a list, for an operator's
 * console: search by email, page by page.
 *
 * @module
 */
import { type SQL, sql } from "drizzle-orm";
import {
  detectDialect,
  type DrizzleDatabase,
  type SQLDatabase,
  type SQLDialect,
} from "./dialect.ts";
import { queryRows } from "./_exec.ts";
import { schemaGate } from "./_schema_gate.ts";
import { storeError } from "./_errors.ts";
import {
  accessTableNames,
  type SQLStoreOptions,
  tableNames,
} from "./table_names.ts";

/** One user as the directory lists it (never the password hash). */
export interface SQLDirectoryUser {
  /** The subject id. */
  id: string;
  /** The email address. */
  email: string;
  /** Unix milliseconds of the first proof of the address; 0: not verified. */
  verifiedAt: number;
  /** Unix milliseconds of the registration. */
  createdAt: number;
  /** Whether an operator banned the account. */
  banned: boolean;
}

/** What {@linkcode SQLUserDirectory.search} takes. */
export interface SQLDirectoryQuery {
  /** Only addresses containing this text (case folded); default all. */
  contains?: string;
  /** Only addresses after this one (the previous page's `next`). */
  after?: string;
  /** At most this many (1–100); default 25. */
  limit?: number;
}

/** One page of users. */
export interface SQLDirectoryPage {
  /** The users, by email. */
  users: SQLDirectoryUser[];
  /** The `after` of the next page, or `null` on the last. */
  next: string | null;
}

/**
 * Lists users by email, with a search and keyset paging (`after` the last
 * address of the page before): no `OFFSET`, so every page costs the same
 * and a row added meanwhile never repeats or hides another.
 *
 * @example Usage
 * ```ts
 * import assert from "node:assert/strict";
 * import { drizzle } from "drizzle-orm/libsql";
 * import { migrate, SQLUserDirectory } from "@portcullis/sql";
 * const db = drizzle({ connection: { url: ":memory:" } });
 * await migrate(db);
 * assert.deepEqual(await new SQLUserDirectory(db).search({ contains: "a@" }), { users: [], next: null });
 * db.$client.close();
 * ```
 */
export class SQLUserDirectory {
  #db: DrizzleDatabase;
  #users: SQL;
  #bans: SQL;
  #gate: () => Promise<void> | undefined;
  /** The dialect the store speaks, detected or given. */
  readonly dialect: SQLDialect;

  /**
   * Makes the directory; the dialect is detected unless given.
   *
   * @param db A drizzle database of any supported dialect.
   * @param options The table prefix, and the dialect if detection is not wanted.
   */
  constructor(db: SQLDatabase, options: SQLStoreOptions = {}) {
    this.#db = db as DrizzleDatabase;
    this.dialect = options.dialect ?? detectDialect(db);
    this.#gate = schemaGate(db, this.dialect, options.tablePrefix ?? "");
    this.#users = sql`${sql.identifier(tableNames(options.tablePrefix).users)}`;
    this.#bans = sql`${
      sql.identifier(accessTableNames(options.tablePrefix).accountBans)
    }`;
  }

  /**
   * One page of users whose address contains `contains`, after `after`.
   *
   * @param query The search, the page's start and its size.
   * @returns The users and the next page's start.
   * @throws {RangeError} For a limit outside 1–100.
   * @throws {AuthError} `STORE_UNAVAILABLE` when the query fails.
   */
  async search(query: SQLDirectoryQuery = {}): Promise<SQLDirectoryPage> {
    const limit = query.limit ?? 25;
    if (!Number.isSafeInteger(limit) || limit < 1 || limit > 100) {
      throw new RangeError(
        `A page holds 1 to 100 users: received ${limit}`,
      );
    }
    await this.#gate();
    const where: SQL[] = [];
    const text = (query.contains ?? "").trim().toLowerCase();
    if (text !== "") {
      // LIKE with its wildcards escaped: the search is for the text itself.
      const pattern = `%${text.replace(/[!%_]/g, (c) => `!${c}`)}%`;
      where.push(sql`u.email LIKE ${pattern} ESCAPE '!'`);
    }
    if (query.after !== undefined && query.after !== "") {
      where.push(sql`u.email > ${query.after}`);
    }
    const filter = where.length === 0
      ? sql``
      : sql`WHERE ${sql.join(where, sql` AND `)}`;
    let rows;
    try {
      rows = await queryRows(
        this.#db,
        this.dialect,
        sql`SELECT u.id, u.email, u.verified_at, u.created_at, b.user_id AS banned FROM ${this.#users} u LEFT JOIN ${this.#bans} b ON b.user_id = u.id ${filter} ORDER BY u.email LIMIT ${
          sql.raw(String(limit + 1))
        }`,
      );
    } catch (err) {
      throw storeError("Listing users", err);
    }
    const users = rows.slice(0, limit).map((row) => ({
      id: String(row.id),
      email: String(row.email),
      verifiedAt: Number(row.verified_at),
      createdAt: Number(row.created_at),
      banned: row.banned !== null && row.banned !== undefined,
    }));
    return {
      users,
      next: rows.length > limit ? users[users.length - 1].email : null,
    };
  }
}
