/**
 * Test helper: scans every table of a SQL database for plaintext secrets
 * (passwords, raw tokens), on every dialect the SQL stores speak. The final
 * suite registers users through the whole stack and then asserts
 * `scanForPlaintext(db, [password, token])` is empty.
 *
 * @module
 */
import { sql } from "drizzle-orm";
import {
  detectDialect,
  type SQLDatabase,
  type SQLDialect,
} from "../../stores/sql/mod.ts";
import { queryRows } from "../../stores/sql/_exec.ts";
import type { DrizzleDatabase } from "../../stores/sql/dialect.ts";

/** Where a needle was found; the needle itself is never echoed. */
export interface PlaintextHit {
  /** The table. */
  table: string;
  /** The column. */
  column: string;
  /** The index of the needle in the list passed in. */
  needle: number;
  /** How it was found: as is, as base64 or as hex of its UTF-8 bytes. */
  encoding: "text" | "base64" | "hex";
}

/** Options of {@linkcode scanForPlaintext}. */
export interface ScanOptions {
  /** Only tables whose name starts with this (a test's own prefix). */
  tablePrefix?: string;
  /** The dialect, when not detected. */
  dialect?: SQLDialect;
}

const LIST_TABLES: Record<SQLDialect, string> = {
  // D1 keeps its own `_cf_*` tables, which it refuses to read.
  sqlite:
    "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite\\_%' ESCAPE '\\' AND name NOT LIKE '\\_cf\\_%' ESCAPE '\\'",
  // The current schema only: tests run in a schema of their own.
  postgresql:
    "SELECT table_name AS name FROM information_schema.tables WHERE table_schema = current_schema() AND table_type = 'BASE TABLE'",
  mysql:
    "SELECT table_name AS name FROM information_schema.tables WHERE table_schema = DATABASE() AND table_type = 'BASE TABLE'",
};

function toHex(bytes: Uint8Array): string {
  return Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("");
}

function toBase64(bytes: Uint8Array): string {
  return btoa(String.fromCharCode(...bytes));
}

/** Every text a stored value could show a secret in. */
function texts(value: unknown): string[] {
  if (value === null || value === undefined) return [];
  if (value instanceof Uint8Array) {
    return [new TextDecoder().decode(value), toHex(value)];
  }
  if (value instanceof ArrayBuffer) return texts(new Uint8Array(value));
  if (typeof value === "object") return [JSON.stringify(value)];
  return [String(value)];
}

/**
 * Reads every row of every table (of the current schema or database) and
 * reports each cell that contains one of the needles, as UTF-8 text, as
 * base64 or as lower-case hex of its UTF-8 bytes.
 *
 * @param db A drizzle database of any supported dialect.
 * @param needles The secrets that must not be stored (at least 4 characters
 * each, so short ones cannot match by chance).
 * @param options A table prefix to limit the scan, or the dialect.
 * @returns The hits; empty when nothing was found.
 */
export async function scanForPlaintext(
  db: SQLDatabase,
  needles: readonly string[],
  options: ScanOptions = {},
): Promise<PlaintextHit[]> {
  if (needles.some((n) => [...n].length < 4)) {
    throw new RangeError("Each needle must hold at least 4 characters");
  }
  const dialect = options.dialect ?? detectDialect(db);
  const forms = needles.map((n) => {
    const bytes = new TextEncoder().encode(n);
    return { text: n, base64: toBase64(bytes), hex: toHex(bytes) };
  });
  const tables = (await queryRows(
    db as DrizzleDatabase,
    dialect,
    sql.raw(LIST_TABLES[dialect]),
  ))
    .map((row) => String(row.name ?? row.NAME ?? row.table_name))
    .filter((name) => name.startsWith(options.tablePrefix ?? ""));
  const hits: PlaintextHit[] = [];
  for (const table of tables) {
    const rows = await queryRows(
      db as DrizzleDatabase,
      dialect,
      sql`SELECT * FROM ${sql.identifier(table)}`,
    );
    for (const row of rows) {
      for (const [column, value] of Object.entries(row)) {
        for (const text of texts(value)) {
          for (const [i, form] of forms.entries()) {
            for (const encoding of ["text", "base64", "hex"] as const) {
              if (text.includes(form[encoding])) {
                hits.push({ table, column, needle: i, encoding });
              }
            }
          }
        }
      }
    }
  }
  return hits;
}
