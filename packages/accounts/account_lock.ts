/**
 * A per-account critical section within one process: the changes that
 * decide together whether an account keeps enough factors (a new password
 * shorter than a sole factor's minimum, the removal of a last second
 * factor) run one at a time per account, so neither checks a state the
 * other is about to change.
 *
 * It holds within a process only. Across processes that share the
 * database, each such change also re-reads what the other writes after
 * its own write and undoes itself when it lost (see `docs/security.md`,
 * "Second factors and short passwords").
 *
 * @module
 */

/**
 * Runs work one at a time per key (an account's subject), in the order
 * it arrives; different keys do not wait for each other. A key's entry
 * goes when its last work ends.
 *
 * @example Usage
 * ```ts
 * import { AccountLocks } from "./account_lock.ts";
 * const locks = new AccountLocks();
 * const order: number[] = [];
 * await Promise.all([1, 2].map((n) =>
 *   locks.run("user_1", async () => {
 *     await new Promise((r) => setTimeout(r, 3 - n));
 *     order.push(n);
 *   })
 * ));
 * console.assert(order.join() === "1,2");
 * ```
 */
export class AccountLocks {
  #tails = new Map<string, Promise<void>>();

  /**
   * Runs `work` once every earlier work of `key` has ended, and before
   * any later one starts.
   *
   * @param key The account's subject.
   * @param work What to run alone.
   * @returns What `work` answers (or its rejection).
   */
  async run<T>(key: string, work: () => Promise<T>): Promise<T> {
    const previous = this.#tails.get(key) ?? Promise.resolve();
    let release!: () => void;
    const done = new Promise<void>((resolve) => release = resolve);
    const tail = previous.then(() => done);
    this.#tails.set(key, tail);
    await previous;
    try {
      return await work();
    } finally {
      release();
      if (this.#tails.get(key) === tail) this.#tails.delete(key);
    }
  }

  /** How many keys have work running or waiting (for tests). */
  get size(): number {
    return this.#tails.size;
  }
}
