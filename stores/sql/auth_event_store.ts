/**
 * `SQLAuthEventStore`: security events in the `auth_events` table through
 * drizzle-orm, on every dialect the SQL stores speak.
 *
 * @module
 */
import { type SQL, sql } from "drizzle-orm";
import {
  SECURITY_EVENT_TYPES,
  type SecurityEvent,
  type SecurityEventType,
} from "@portcullis/auth/events";
import {
  aggregationWindow,
  eventListLimit,
  type EventRetention,
  eventRetention,
  type EventRetentionOptions,
  FLOODABLE_EVENT_TYPES,
  isFloodable,
  type SecurityEventStore,
} from "@portcullis/auth/events";
import {
  detectDialect,
  type DrizzleDatabase,
  type SQLDatabase,
  type SQLDialect,
} from "./dialect.ts";
import { execute, queryRows, type Row } from "./_exec.ts";
import { storeError } from "./_errors.ts";
import { lifecycleTableNames, type SQLStoreOptions } from "./table_names.ts";

const TYPES = new Set<string>(SECURITY_EVENT_TYPES);

function toEvent(row: Row): SecurityEvent | null {
  const type = String(row.type);
  // A row of a type this version does not know is skipped, not guessed.
  if (!TYPES.has(type)) return null;
  return {
    type: type as SecurityEventType,
    subject: String(row.subject),
    at: Number(row.at),
    userAgent: row.user_agent === null || row.user_agent === undefined
      ? null
      : String(row.user_agent),
    ...(row.actor === null || row.actor === undefined
      ? {}
      : { actor: String(row.actor) }),
    ...(row.detail === null || row.detail === undefined
      ? {}
      : { detail: String(row.detail) }),
  };
}

let sequence = 0;
const encoder = new TextEncoder();

/**
 * The one id of a floodable event per (subject, type, window): a second
 * event of the window hits the primary key and is not kept.
 */
async function windowId(
  subject: string,
  type: string,
  window: number,
): Promise<string> {
  const digest = new Uint8Array(
    await crypto.subtle.digest(
      "SHA-256",
      encoder.encode(`${subject}\n${type}`),
    ),
  );
  let hex = "";
  for (const b of digest.subarray(0, 16)) {
    hex += b.toString(16).padStart(2, "0");
  }
  return `${Math.max(0, window).toString(36).padStart(10, "0")}w${hex}`;
}

/** An id that sorts by time, then by order of append in this process. */
function eventId(at: number): string {
  sequence = (sequence + 1) % 36 ** 4;
  const random = crypto.getRandomValues(new Uint8Array(8));
  let tail = "";
  for (const b of random) tail += b.toString(16).padStart(2, "0");
  return `${Math.max(0, at).toString(36).padStart(10, "0")}${
    sequence.toString(36).padStart(4, "0")
  }${tail}`;
}

/**
 * A {@linkcode SecurityEventStore} over a drizzle database. Create the table
 * with `migrate(db)` (migration 0002). Events without a subject are not
 * kept. `list` answers newest first (by time, then by order of append).
 *
 * A stranger's flood cannot wipe an account's activity: an event anyone can
 * cause (`login_failed`, `throttled`) is kept at most once per account,
 * type and window (its id is derived from the three, so concurrent
 * instances insert it once), and when an account holds more than
 * `maxPerSubject` rows the oldest of those go first, then the oldest of
 * the rest (`EventRetentionOptions` of `@portcullis/auth/events`). An
 * event's `actor` and `detail` (an operator acting on the account) go in
 * the columns of the same names (migration `0002_api_keys_and_bans`).
 *
 * @example Usage
 * ```ts
 * import assert from "node:assert/strict";
 * import { drizzle } from "drizzle-orm/libsql";
 * import { migrate, SQLAuthEventStore } from "@portcullis/sql";
 * const db = drizzle({ connection: { url: ":memory:" } });
 * await migrate(db);
 * const events = new SQLAuthEventStore(db);
 * await events.append({ type: "login", subject: "u1", at: Date.now(), userAgent: null });
 * assert.equal((await events.list("u1"))[0].type, "login");
 * db.$client.close();
 * ```
 */
export class SQLAuthEventStore implements SecurityEventStore {
  #db: DrizzleDatabase;
  #table: SQL;
  #retention: EventRetention;

  /** The dialect the store speaks, detected or given. */
  readonly dialect: SQLDialect;

  /**
   * Makes the store over a drizzle database.
   *
   * @param db A drizzle database of any supported dialect.
   * @param options The table prefix, the dialect if detection is not
   * wanted, and the aggregation window and cap per subject
   * (`EventRetentionOptions`: 15 minutes and 1000 rows by default).
   * @throws {TypeError} When `db` is not a drizzle database or the prefix is invalid.
   * @throws {RangeError} For a window or a cap `eventRetention` refuses.
   *
   * @example Usage
   * ```ts
   * import assert from "node:assert/strict";
   * import { drizzle } from "drizzle-orm/libsql";
   * import { SQLAuthEventStore } from "@portcullis/sql";
   * const db = drizzle({ connection: { url: ":memory:" } });
   * assert.equal(new SQLAuthEventStore(db).dialect, "sqlite");
   * db.$client.close();
   * ```
   */
  constructor(
    db: SQLDatabase,
    options: SQLStoreOptions & EventRetentionOptions = {},
  ) {
    this.#db = db as DrizzleDatabase;
    this.#retention = eventRetention(options);
    this.dialect = options.dialect ?? detectDialect(db);
    const name = lifecycleTableNames(options.tablePrefix).authEvents;
    this.#table = sql`${sql.identifier(name)}`;
  }

  /**
   * Keeps one event; an event without a subject is dropped, and so is a
   * floodable one whose (subject, type, window) is already kept. Then, when
   * the subject holds more than `maxPerSubject` rows, the oldest floodable
   * ones go first, then the oldest of the rest.
   *
   * @param event The event.
   * @throws {AuthError} `STORE_UNAVAILABLE` when the write fails.
   */
  async append(event: SecurityEvent): Promise<void> {
    if (event.subject === null) return;
    const floodable = isFloodable(event.type);
    const id = floodable
      ? await windowId(
        event.subject,
        event.type,
        aggregationWindow(event.at, this.#retention.aggregationWindowMs),
      )
      : eventId(event.at);
    const insert =
      sql`INSERT INTO ${this.#table} (id, subject, type, at, user_agent, actor, detail) VALUES (${id}, ${event.subject}, ${event.type}, ${event.at}, ${event.userAgent}, ${
        event.actor ?? null
      }, ${event.detail?.slice(0, 200) ?? null})`;
    try {
      await execute(
        this.#db,
        this.dialect,
        !floodable
          ? insert
          : this.dialect === "mysql"
          ? sql`${insert} ON DUPLICATE KEY UPDATE id = id`
          : sql`${insert} ON CONFLICT (id) DO NOTHING`,
      );
      await this.#prune(event.subject);
    } catch (err) {
      throw storeError("Recording a security event", err);
    }
  }

  /** Drops a subject's rows past the cap: floodable ones first, oldest first. */
  async #prune(subject: string): Promise<void> {
    const [row] = await queryRows(
      this.#db,
      this.dialect,
      sql`SELECT COUNT(*) AS n FROM ${this.#table} WHERE subject = ${subject}`,
    );
    const excess = Number(row?.n ?? 0) - this.#retention.maxPerSubject;
    if (!(excess > 0)) return;
    const floodable = sql.join(
      FLOODABLE_EVENT_TYPES.map((t) => sql`${t}`),
      sql`, `,
    );
    const victims = await queryRows(
      this.#db,
      this.dialect,
      sql`SELECT id FROM ${this.#table} WHERE subject = ${subject} ORDER BY CASE WHEN type IN (${floodable}) THEN 0 ELSE 1 END, at, id LIMIT ${
        sql.raw(String(Math.min(excess, 1000)))
      }`,
    );
    if (victims.length === 0) return;
    await execute(
      this.#db,
      this.dialect,
      sql`DELETE FROM ${this.#table} WHERE subject = ${subject} AND id IN (${
        sql.join(victims.map((v) => sql`${String(v.id)}`), sql`, `)
      })`,
    );
  }

  /**
   * A subject's latest events, newest first.
   *
   * @param subject The subject.
   * @param limit At most this many (1–1000); default 50.
   * @returns The events.
   * @throws {RangeError} For a limit outside 1–1000.
   * @throws {AuthError} `STORE_UNAVAILABLE` when the query fails.
   */
  async list(subject: string, limit?: number): Promise<SecurityEvent[]> {
    const n = eventListLimit(limit);
    let rows: Row[];
    try {
      rows = await queryRows(
        this.#db,
        this.dialect,
        sql`SELECT subject, type, at, user_agent, actor, detail FROM ${this.#table} WHERE subject = ${subject} ORDER BY at DESC, id DESC LIMIT ${
          sql.raw(String(n))
        }`,
      );
    } catch (err) {
      throw storeError("Reading security events", err);
    }
    return rows.flatMap((row) => toEvent(row) ?? []);
  }

  /**
   * Removes every event of a subject.
   *
   * @param subject The subject.
   * @throws {AuthError} `STORE_UNAVAILABLE` when the query fails.
   */
  async deleteFor(subject: string): Promise<void> {
    try {
      await execute(
        this.#db,
        this.dialect,
        sql`DELETE FROM ${this.#table} WHERE subject = ${subject}`,
      );
    } catch (err) {
      throw storeError("Deleting security events", err);
    }
  }

  /**
   * Removes events older than `before`: housekeeping for a scheduled job.
   *
   * @param before Unix milliseconds; events with `at < before` go.
   * @throws {AuthError} `STORE_UNAVAILABLE` when the query fails.
   *
   * @example Usage
   * ```ts
   * import { drizzle } from "drizzle-orm/libsql";
   * import { migrate, SQLAuthEventStore } from "@portcullis/sql";
   * const db = drizzle({ connection: { url: ":memory:" } });
   * await migrate(db);
   * await new SQLAuthEventStore(db).deleteOlderThan(Date.now() - 90 * 86_400_000);
   * db.$client.close();
   * ```
   */
  async deleteOlderThan(before: number): Promise<void> {
    try {
      await execute(
        this.#db,
        this.dialect,
        sql`DELETE FROM ${this.#table} WHERE at < ${before}`,
      );
    } catch (err) {
      throw storeError("Deleting old security events", err);
    }
  }
}
