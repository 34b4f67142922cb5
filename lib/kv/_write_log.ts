// What a reader in another layer may know of an in-process store's writes,
// without a public name: MemoryKV registers its log here, and
// KVSessionStore looks it up once, when it is built. Not exported by any
// entry point.

/** An in-process store's count of changes, and whether keys are held. */
export interface WriteLog {
  /**
   * Changes so far: every `put`, `delete` and `increment` adds one, so an
   * answer read while this count held still holds while it does.
   */
  readonly writes: number;
  /**
   * Whether none of the keys is held at all, expired or not: then no read
   * can find one of them until the next write.
   *
   * @param keys The keys.
   */
  noneHeld(keys: readonly string[]): boolean;
}

const logs = new WeakMap<object, WriteLog>();

/**
 * Registers a store's log (its constructor does).
 *
 * @param store The store.
 * @param log Its log.
 */
export function registerWriteLog(store: object, log: WriteLog): void {
  logs.set(store, log);
}

/**
 * The log of a store that keeps one, else `undefined`.
 *
 * @param store A key-value store.
 * @returns Its log.
 */
export function writeLogOf(store: object): WriteLog | undefined {
  return logs.get(store);
}
