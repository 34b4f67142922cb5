/**
 * A bound on password-hashing work: each sign-in or registration costs one
 * slow hash (600000 PBKDF2 iterations by default) whether the email exists
 * or not, so anonymous clients from many addresses could keep every core
 * busy and slow every legitimate sign-in. The gate runs at most
 * `concurrency` hashes at once, keeps `reserved` of them for requests that
 * carry a valid trusted-device token (a browser that signed in to the
 * account before), lets a short queue wait, and refuses the rest at once
 * (the app answers 503 with `Retry-After`).
 *
 * @module
 */

/** Options of {@linkcode HashingGate}. */
export interface HashingGateOptions {
  /**
   * Hashes run at once; default the number of CPUs the runtime reports
   * (`navigator.hardwareConcurrency`), at least 2.
   */
  concurrency?: number;
  /**
   * Of those, slots only a trusted-device request may use, so a flood of
   * anonymous sign-ins never takes them all; default 1. Anonymous requests
   * use at most `concurrency - reserved` (at least 1).
   */
  reserved?: number;
  /**
   * Requests that may wait for a slot, per kind (trusted, anonymous);
   * default 16. Past it, the request is refused at once.
   */
  queue?: number;
}

/** Releases a slot taken with {@linkcode HashingGate.acquire}. */
export type Release = () => void;

interface Waiter {
  resolve: (release: Release) => void;
}

/**
 * Bounds concurrent password hashing, trusted-device requests first.
 *
 * @example Usage
 * ```ts
 * import assert from "node:assert/strict";
 * import { HashingGate } from "@portcullis/accounts";
 *
 * const gate = new HashingGate({ concurrency: 2, reserved: 1, queue: 0 });
 * const anonymous = await gate.acquire(false);
 * assert.ok(anonymous);
 * // Anonymous requests have one slot and no queue: refused.
 * assert.equal(await gate.acquire(false), null);
 * // A trusted-device request takes the reserved slot.
 * const trusted = await gate.acquire(true);
 * assert.ok(trusted);
 * anonymous();
 * trusted();
 * ```
 */
export class HashingGate {
  #concurrency: number;
  #anonymousLimit: number;
  #queue: number;
  #running = 0;
  #trusted: Waiter[] = [];
  #anonymous: Waiter[] = [];

  /**
   * Checks the settings once.
   *
   * @param options See {@linkcode HashingGateOptions}.
   * @throws {RangeError} For a concurrency below 1, a negative reserve or
   * queue, or a reserve that leaves anonymous requests no slot.
   */
  constructor(options: HashingGateOptions = {}) {
    const cpus =
      (globalThis as { navigator?: { hardwareConcurrency?: number } })
        .navigator?.hardwareConcurrency ?? 2;
    const concurrency = options.concurrency ?? Math.max(2, cpus);
    const reserved = options.reserved ?? 1;
    const queue = options.queue ?? 16;
    if (!Number.isInteger(concurrency) || concurrency < 1) {
      throw new RangeError(
        `hashing.concurrency must be a whole number of at least 1: received ${concurrency}`,
      );
    }
    if (
      !Number.isInteger(reserved) || reserved < 0 || reserved >= concurrency
    ) {
      throw new RangeError(
        `hashing.reserved must be a whole number from 0 to concurrency - 1 (${
          concurrency - 1
        }): received ${reserved}`,
      );
    }
    if (!Number.isInteger(queue) || queue < 0) {
      throw new RangeError(
        `hashing.queue must be a whole number of at least 0: received ${queue}`,
      );
    }
    this.#concurrency = concurrency;
    this.#anonymousLimit = concurrency - reserved;
    this.#queue = queue;
  }

  /** Hashes running now. */
  get running(): number {
    return this.#running;
  }

  /** Requests waiting now, trusted and anonymous. */
  get waiting(): number {
    return this.#trusted.length + this.#anonymous.length;
  }

  /**
   * Whether a request of this kind would get a slot or a place in the
   * queue now (a cheap check before any other work).
   *
   * @param trusted Whether the request carries a trusted-device token.
   * @returns `false` when {@linkcode HashingGate.acquire} would refuse.
   */
  admits(trusted: boolean): boolean {
    if (this.#canStart(trusted)) return true;
    return (trusted ? this.#trusted : this.#anonymous).length < this.#queue;
  }

  /**
   * Takes a slot, waiting in the queue when every slot of this kind is
   * busy. Call the answer once the hash is done (in a `finally`).
   *
   * @param trusted Whether the request carries a valid trusted-device token.
   * @returns The release, or `null` when the queue is full (answer 503).
   */
  acquire(trusted: boolean): Promise<Release | null> {
    if (this.#canStart(trusted)) return Promise.resolve(this.#start());
    const queue = trusted ? this.#trusted : this.#anonymous;
    if (queue.length >= this.#queue) return Promise.resolve(null);
    return new Promise((resolve) => queue.push({ resolve }));
  }

  #canStart(trusted: boolean): boolean {
    if (trusted) return this.#running < this.#concurrency;
    // Anonymous requests wait behind trusted ones and leave the reserve.
    return this.#trusted.length === 0 &&
      this.#running < this.#anonymousLimit;
  }

  #start(): Release {
    this.#running++;
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.#running--;
      this.#dispatch();
    };
  }

  #dispatch(): void {
    while (this.#trusted.length > 0 && this.#running < this.#concurrency) {
      this.#trusted.shift()!.resolve(this.#start());
    }
    while (
      this.#trusted.length === 0 && this.#anonymous.length > 0 &&
      this.#running < this.#anonymousLimit
    ) {
      this.#anonymous.shift()!.resolve(this.#start());
    }
  }
}
