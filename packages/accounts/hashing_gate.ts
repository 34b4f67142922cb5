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

/** How long a client refused by the bound is told to wait, in seconds. */
export const HASHING_BUSY_RETRY_SECONDS = 2;

/** What a client refused by the bound is told. */
export const HASHING_BUSY_MESSAGE =
  "Too many passwords are being checked right now: try again in a few seconds";

/**
 * Thrown by {@linkcode HashingGate.run} when the bound has no slot
 * and no place in its queue: the work did not run, nothing changed, and the
 * app answers 503 `busy` with `Retry-After`.
 */
export class HashingBusyError extends Error {
  /** How long the client is told to wait, in seconds. */
  readonly retryAfterSeconds: number;

  /**
   * Makes the error.
   *
   * @param retryAfterSeconds How long the client is told to wait.
   */
  constructor(retryAfterSeconds: number = HASHING_BUSY_RETRY_SECONDS) {
    super(HASHING_BUSY_MESSAGE);
    this.name = "HashingBusyError";
    this.retryAfterSeconds = retryAfterSeconds;
  }
}

/** Releases a slot taken with {@linkcode HashingGate.acquire}. */
export type Release = () => void;

/**
 * A place taken with {@linkcode HashingGate.enter}: a slot, or a place in
 * the queue, held while the caller does its other work (counting the
 * attempt) before it hashes.
 */
export interface HashingTicket {
  /**
   * The slot's release once one is free, or `null` when the place went to
   * a trusted request of an account served longer ago, or was given up.
   */
  readonly ready: Promise<Release | null>;
  /**
   * Gives the place up: a waiting one leaves the queue, a slot already
   * given is released (the same as calling its release).
   */
  cancel(): void;
}

interface Waiter {
  resolve: (release: Release | null) => void;
  /** The account of a trusted request ("" for an anonymous one). */
  account: string;
  /** When its account was last served (-1: not lately): lower goes first. */
  rank: number;
}

/** Accounts whose last trusted hash the gate remembers. */
const REMEMBERED_ACCOUNTS = 10_000;

/**
 * Bounds concurrent password hashing, trusted-device requests first.
 *
 * Anonymous requests use at most `concurrency - reserved` slots. While no
 * trusted request waits they count every hash running, so the reserve and
 * the core beside a lone trusted hash stay free for it; while trusted
 * requests wait, the anonymous lane keeps its own share, and a trusted
 * request that takes a slot beyond the reserve while anonymous ones wait
 * hands the next slot to them. A flood of trusted requests (an attacker's
 * own accounts, each with its own device cookie) therefore cannot starve
 * registrations and browsers new to an account: under contention the two
 * lanes share the slots.
 *
 * A trusted-device token is cheap for anyone to hold for an account of
 * their own, so the trusted lane is fair between accounts: an account has
 * at most one trusted hash running or waiting (another of its trusted
 * requests is refused, never moved to the anonymous lane, where it would
 * have escaped the per-address limits its device cookie skipped), and the
 * waiting ones are served by how long ago their account was last served,
 * oldest first. When the trusted queue is full, a request of
 * an account served longer ago takes the place of the one served most
 * lately. A flood of sign-ins to the attacker's own accounts then keeps
 * going to the back, and the owner who signs in now and then is served
 * next.
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
 * const trusted = await gate.acquire(true, "owner@example.com");
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
  #runningTrusted = 0;
  #runningAnonymous = 0;
  /**
   * A trusted request took a slot beyond the reserve while anonymous ones
   * waited: the next slot is the anonymous lane's.
   */
  #anonymousTurn = false;
  #trusted: Waiter[] = [];
  #anonymous: Waiter[] = [];
  /** Accounts with a trusted hash running or waiting. */
  #active = new Set<string>();
  /** Each account's last trusted service, in the gate's own sequence. */
  #served = new Map<string, number>();
  #sequence = 0;

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
   * @param account The account it signs in to (trusted requests).
   * @returns `false` when {@linkcode HashingGate.acquire} would refuse.
   */
  admits(trusted: boolean, account = ""): boolean {
    if (this.#taken(trusted, account)) return false;
    const lane = trusted;
    if (this.#canStart(lane)) return true;
    if (!lane) return this.#anonymous.length < this.#queue;
    if (this.#trusted.length < this.#queue) return true;
    const last = this.#trusted.at(-1);
    return last !== undefined && last.rank > this.#rank(account);
  }

  /**
   * Takes a slot, waiting in the queue when every slot of this kind is
   * busy. Call the answer once the hash is done (in a `finally`).
   *
   * @param trusted Whether the request carries a valid trusted-device token.
   * @param account The account it signs in to: a trusted request's place
   * in the fair lane (an account already running or waiting there is
   * refused). Without it, the request is not tracked.
   * @returns The release, or `null` when the queue is full or the account
   * already has a trusted hash running or waiting (answer 503).
   */
  acquire(trusted: boolean, account = ""): Promise<Release | null> {
    return this.enter(trusted, account)?.ready ?? Promise.resolve(null);
  }

  /**
   * Takes a slot or a place in the queue now, and answers at once whether
   * it could: for a caller with work to do before it hashes (the sign-in
   * counts the attempt in the login throttle), so that nothing is counted
   * for a request the bound refuses, and no request is counted and then
   * refused because others took the places meanwhile. Give the place up
   * with `cancel` when that work decides not to hash.
   *
   * @param trusted Whether the request carries a valid trusted-device token.
   * @param account The account (see {@linkcode HashingGate.acquire}).
   * @returns The ticket, or `null` when the queue is full or the account
   * already has a trusted hash running or waiting (answer 503).
   */
  enter(trusted: boolean, account = ""): HashingTicket | null {
    if (this.#taken(trusted, account)) return null;
    const lane = trusted;
    if (this.#canStart(lane)) {
      const release = this.#start(lane, account);
      return { ready: Promise.resolve(release), cancel: release };
    }
    // (Not Promise.withResolvers: Node 20 has none.)
    let resolve!: (release: Release | null) => void;
    const promise = new Promise<Release | null>((r) => resolve = r);
    if (!lane) {
      if (this.#anonymous.length >= this.#queue) return null;
      const waiter = { resolve, account: "", rank: 0 };
      this.#anonymous.push(waiter);
      return this.#ticket(promise, waiter, this.#anonymous);
    }
    const rank = this.#rank(account);
    if (this.#trusted.length >= this.#queue) {
      // The waiter served most lately gives its place to one served
      // longer ago, or this request is refused.
      const last = this.#trusted.at(-1);
      if (last === undefined || last.rank <= rank) return null;
      this.#trusted.pop();
      this.#active.delete(last.account);
      last.resolve(null);
    }
    if (account !== "") this.#active.add(account);
    const at = this.#trusted.findIndex((w) => w.rank > rank);
    const waiter = { resolve, account, rank };
    if (at < 0) this.#trusted.push(waiter);
    else this.#trusted.splice(at, 0, waiter);
    return this.#ticket(promise, waiter, this.#trusted);
  }

  /**
   * Runs password work (a hash, a check) in a slot: every password check
   * that is not a sign-in's goes through the same bound, so no route
   * hashes beside it. Work for a signed-in owner of an account (the
   * re-check before a sensitive action, the current password of a change)
   * names the account and goes in the trusted lane, fair between accounts;
   * anything else (registration, a link confirmed with the password) in
   * the anonymous lane.
   *
   * @param work The work; it runs once a slot is free.
   * @param options `account`: the signed-in account the work is for.
   * @returns What the work returns.
   * @throws {HashingBusyError} When the queue is full, or the account has a
   * trusted hash running or waiting already: the work never ran.
   */
  async run<T>(
    work: () => Promise<T>,
    options: { account?: string } = {},
  ): Promise<T> {
    const account = options.account ?? "";
    const release = await this.acquire(account !== "", account);
    if (release === null) throw new HashingBusyError();
    try {
      return await work();
    } finally {
      release();
    }
  }

  /** A trusted request of an account already running or waiting. */
  #taken(trusted: boolean, account: string): boolean {
    return trusted && account !== "" && this.#active.has(account);
  }

  /** A trusted request's place: "" (no account named) is never tracked. */
  #rank(account: string): number {
    return account === "" ? -1 : this.#served.get(account) ?? -1;
  }

  #canStart(trusted: boolean): boolean {
    if (this.#running >= this.#concurrency) return false;
    // The anonymous lane's turn: a trusted request took its slot.
    if (this.#anonymousTurn && this.#anonymous.length > 0) return !trusted;
    if (trusted) return true;
    // Anonymous requests leave the reserve (and the core beside a lone
    // trusted hash) free; while trusted ones wait, they keep their share.
    if (this.#trusted.length === 0) {
      return this.#running < this.#anonymousLimit;
    }
    return this.#runningAnonymous < this.#anonymousLimit &&
      this.#runningTrusted >= this.#concurrency - this.#anonymousLimit;
  }

  /** Starts a hash; `account` names a trusted one's account. */
  #start(trusted: boolean, account: string): Release {
    this.#running++;
    if (trusted) {
      this.#runningTrusted++;
      // Beyond the reserve while anonymous requests wait: their turn next.
      if (
        this.#runningTrusted > this.#concurrency - this.#anonymousLimit &&
        this.#anonymous.length > 0
      ) this.#anonymousTurn = true;
    } else {
      this.#runningAnonymous++;
      this.#anonymousTurn = false;
    }
    if (trusted && account !== "") {
      this.#active.add(account);
      this.#served.delete(account);
      this.#served.set(account, this.#sequence++);
      if (this.#served.size > REMEMBERED_ACCOUNTS) {
        this.#served.delete(this.#served.keys().next().value!);
      }
    }
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.#running--;
      if (trusted) {
        this.#runningTrusted--;
        this.#active.delete(account);
      } else this.#runningAnonymous--;
      this.#dispatch();
    };
  }

  /** A waiting place's ticket: `cancel` takes it out of its queue. */
  #ticket(
    promise: Promise<Release | null>,
    waiter: Waiter,
    queue: Waiter[],
  ): HashingTicket {
    let cancelled = false;
    let given: Release | null = null;
    const ready = promise.then((release) => {
      if (cancelled) {
        release?.();
        return null;
      }
      given = release;
      return release;
    });
    return {
      ready,
      cancel: () => {
        if (cancelled) return;
        cancelled = true;
        given?.();
        const at = queue.indexOf(waiter);
        if (at < 0) return; // given a slot (released above, or on arrival)
        queue.splice(at, 1);
        if (waiter.account !== "") this.#active.delete(waiter.account);
        waiter.resolve(null);
        // A trusted waiter fewer may let an anonymous one start.
        this.#dispatch();
      },
    };
  }

  #dispatch(): void {
    for (;;) {
      if (this.#trusted.length > 0 && this.#canStart(true)) {
        const next = this.#trusted.shift()!;
        next.resolve(this.#start(true, next.account));
      } else if (this.#anonymous.length > 0 && this.#canStart(false)) {
        this.#anonymous.shift()!.resolve(this.#start(false, ""));
      } else return;
    }
  }
}
