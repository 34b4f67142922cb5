// Store calls on the request path run under a deadline, so that a store that
// hangs answers "unavailable" (503) instead of holding requests forever.
// One timer serves every pending call: it is armed when the first call
// starts and cleared when the last one settles, so an idle process has no
// timer left behind.

/** The error a call gets when its deadline passes first. */
export class DeadlineExceeded extends Error {
  constructor(ms: number) {
    super(`Store did not answer within ${ms} ms`);
    this.name = "DeadlineExceeded";
  }
}

interface Pending {
  at: number;
  reject: (error: Error) => void;
}

/** Races store calls against one shared timer. */
export class Deadline {
  readonly ms: number;
  #pending = new Set<Pending>();
  #timer: ReturnType<typeof setTimeout> | undefined;

  constructor(ms: number) {
    if (!Number.isFinite(ms) || ms <= 0) {
      throw new RangeError(
        `storeTimeoutMs must be a positive number of milliseconds: received ${ms}`,
      );
    }
    this.ms = ms;
  }

  /** The promise's outcome, or a {@linkcode DeadlineExceeded} rejection. */
  guard<T>(promise: Promise<T>): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      const entry: Pending = { at: performance.now() + this.ms, reject };
      this.#pending.add(entry);
      if (this.#timer === undefined) this.#arm(this.ms);
      promise.then(
        (value) => {
          this.#settle(entry);
          resolve(value);
        },
        (error) => {
          this.#settle(entry);
          reject(error);
        },
      );
    });
  }

  #settle(entry: Pending): void {
    this.#pending.delete(entry);
    if (this.#pending.size === 0 && this.#timer !== undefined) {
      clearTimeout(this.#timer);
      this.#timer = undefined;
    }
  }

  #arm(ms: number): void {
    this.#timer = setTimeout(() => this.#sweep(), Math.max(1, ms));
  }

  #sweep(): void {
    this.#timer = undefined;
    const now = performance.now();
    let next = Infinity;
    for (const entry of this.#pending) {
      if (entry.at <= now + 1) {
        this.#pending.delete(entry);
        entry.reject(new DeadlineExceeded(this.ms));
      } else if (entry.at < next) next = entry.at;
    }
    if (this.#pending.size > 0) this.#arm(next - now);
  }
}
