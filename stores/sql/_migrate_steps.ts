/**
 * What `migrate` needs from each dialect, and the helpers the three share.
 * Internal to `stores/sql`.
 *
 * @module
 */
import type { SQLMigrationStep } from "./migration_sql.ts";

/** The journal table's name for a prefix. */
export function journalName(prefix: string): string {
  return `${prefix}portcullis_migrations`;
}

/** How `migrate` talks to one dialect. */
export interface DialectSteps {
  /** The tables of the current schema or database. */
  tables(): Promise<Set<string>>;
  /** The journal's tags, or `null` when there is no journal table. */
  journal(): Promise<string[] | null>;
  /**
   * Applies one step, all-or-nothing where the dialect allows, unless
   * another instance applied it first; answers whether this call did.
   */
  apply(step: SQLMigrationStep): Promise<boolean>;
}

export function describe(err: unknown): string {
  let e: unknown = err;
  for (let i = 0; i < 8; i++) {
    const next = (e as { cause?: unknown } | null)?.cause;
    if (next === undefined || next === null) break;
    e = next;
  }
  const inner = e as { code?: unknown; message?: unknown } | null;
  const code = inner?.code !== undefined ? `${String(inner.code)} ` : "";
  const message = typeof inner?.message === "string"
    ? inner.message.slice(0, 300)
    : String(e);
  return `${code}${message}`.trim();
}

/** The names of the tables a CREATE TABLE / CREATE INDEX statement touches. */
function createdTable(statement: string): string | null {
  return /^CREATE TABLE [`"](\w+)[`"]/.exec(statement)?.[1] ?? null;
}
function indexedTable(statement: string): string | null {
  return /^CREATE (?:UNIQUE )?INDEX [`"]\w+[`"] ON [`"](\w+)[`"]/.exec(
    statement,
  )?.[1] ?? null;
}

/**
 * The statements of a step minus what already exists: a database made by
 * 0.2.0's `migrate()` has the first step's tables (and their indexes), so
 * only the missing ones are created and the step is then recorded.
 */
export async function pendingStatements(
  io: Pick<DialectSteps, "tables">,
  step: SQLMigrationStep,
): Promise<string[]> {
  if (!step.tag.startsWith("0000_")) return step.statements;
  const existing = await io.tables();
  if (existing.size === 0) return step.statements;
  return step.statements.filter((s) => {
    const table = createdTable(s) ?? indexedTable(s);
    return table === null || !existing.has(table);
  });
}
