/**
 * Which databases (and table prefixes) have been migrated or checked in
 * this process, so that the stores check each one once. Internal to
 * `stores/sql`.
 *
 * @module
 */
const checked = new WeakMap<object, Set<string>>();

/**
 * The object a database is known by: drizzle's client when it has one (a
 * Worker may wrap one D1 binding in a new drizzle object per request).
 */
export function keyOf(db: object): object {
  const client = (db as { $client?: unknown }).$client;
  return typeof client === "object" && client !== null ? client : db;
}

/** Records that `db` has every migration, for `prefix`. */
export function markChecked(db: object, prefix: string): void {
  const key = keyOf(db);
  let set = checked.get(key);
  if (set === undefined) checked.set(key, set = new Set());
  set.add(prefix);
}

/** True when `db` is known to have every migration, for `prefix`. */
export function isChecked(db: object, prefix: string): boolean {
  return checked.get(keyOf(db))?.has(prefix) ?? false;
}
