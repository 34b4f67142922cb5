/**
 * Replacing a subject's single-use token in one drizzle batch on SQLite
 * drivers that have batches (libSQL, Turso, D1). Internal to `stores/sql`.
 *
 * @module
 */
import { and, eq } from "drizzle-orm";
import { integer, sqliteTable, text } from "drizzle-orm/sqlite-core";
import type { VerificationTokenRecord } from "@portcullis/auth/verification";
import type { DrizzleDatabase as SQLDatabase } from "./dialect.ts";

function tokenTable(name: string) {
  return sqliteTable(name, {
    tokenHash: text("token_hash").primaryKey(),
    purpose: text("purpose").notNull(),
    subject: text("subject").notNull(),
    email: text("email").notNull(),
    expiresAt: integer("expires_at").notNull(),
    createdAt: integer("created_at").notNull(),
  });
}

type TokenTable = ReturnType<typeof tokenTable>;

interface Batching {
  batch(items: unknown[]): Promise<unknown>;
  delete(table: TokenTable): {
    where(condition: unknown): unknown;
  };
  insert(table: TokenTable): {
    values(row: VerificationTokenRecord): unknown;
  };
}

/** True when the drizzle SQLite database can run a batch. */
export function canBatch(db: SQLDatabase): boolean {
  return typeof (db as unknown as Partial<Batching>).batch === "function";
}

/**
 * Makes a function that deletes a subject's tokens of a purpose and inserts
 * the new one in one batch (one implicit transaction on libSQL and D1).
 * Query builders, not raw SQL: drizzle's D1 batch only binds parameters of
 * prepared builder queries.
 */
export function batchPut(
  tableName: string,
): (db: SQLDatabase, record: VerificationTokenRecord) => Promise<void> {
  const t = tokenTable(tableName);
  return async (db, record) => {
    const lite = db as unknown as Batching;
    await lite.batch([
      lite.delete(t).where(
        and(eq(t.subject, record.subject), eq(t.purpose, record.purpose)),
      ),
      lite.insert(t).values({
        tokenHash: record.tokenHash,
        purpose: record.purpose,
        subject: record.subject,
        email: record.email,
        expiresAt: record.expiresAt,
        createdAt: record.createdAt,
      }),
    ]);
  };
}
