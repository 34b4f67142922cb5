// Tasks run one after another per key, within one process or isolate: two
// read-change-writes of one stored value that overlap would keep only the
// later one's change. A task waits for the one before it at most
// `waitMs`, so one that hangs (a store without a deadline, or on
// Cloudflare Workers a task of a request that was cancelled, whose
// continuations never run) delays the next ones, never stops them.

/** One queue per key, of tasks that run one after another. */
export class KeyedQueue {
  #tails = new Map<string, Promise<void>>();
  #waitMs: number;

  /** @param waitMs How long a task waits for the one before it, at most. */
  constructor(waitMs: number) {
    this.#waitMs = waitMs;
  }

  /**
   * Runs `task` after the key's tasks already queued, whether they failed
   * or not.
   *
   * @param key The key.
   * @param task The task.
   * @returns What the task answers.
   */
  run<T>(key: string, task: () => Promise<T>): Promise<T> {
    const done = this.settled(key).then(task);
    const tail = done.then(() => {}, () => {});
    this.#tails.set(key, tail);
    tail.then(() => {
      if (this.#tails.get(key) === tail) this.#tails.delete(key);
    });
    return done;
  }

  /**
   * Settles when the key's queued tasks have, or after the wait.
   *
   * @param key The key.
   */
  settled(key: string): Promise<void> {
    const before = this.#tails.get(key);
    if (before === undefined) return Promise.resolve();
    let timer: ReturnType<typeof setTimeout> | undefined;
    const late = new Promise<void>((wake) => {
      timer = setTimeout(wake, this.#waitMs);
    });
    return Promise.race([before, late]).finally(() => clearTimeout(timer));
  }
}
