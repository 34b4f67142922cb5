// Store calls on the request path run under a deadline, so that a store that
// hangs answers "unavailable" (503) instead of holding requests forever.
//
// One timer serves every pending call. Arming and clearing a timer costs
// more than the rest of a warm request (measured: about ten times a promise
// hop in Deno), so the timer is not cleared when the last call settles: it
// stays armed until it fires, and while no call is pending it is unref'd,
// so it never keeps an idle process alive. When it fires with nothing
// pending, it is not armed again. That needs timers that can be unref'd
// (Deno, Node, Bun). Elsewhere (Workers, where a timer belongs to the
// request that set it and is dropped when that request ends), each call
// gets a timer of its own. A shared timer that fired very late is taken as
// lost and replaced.
/** The error a call gets when its deadline passes first. */
export class DeadlineExceeded extends Error {
  constructor(ms: number) {
    super(`Store did not answer within ${ms} ms`);
    this.name = "DeadlineExceeded";
  }
}

interface Pending {
  at: number;
  reject: (error: unknown) => void;
}

const same = (error: unknown): unknown => error;

/** Races store calls against one shared timer. */
export class Deadline {
  readonly ms: number;
  #pending = new Set<Pending>();
  #timer: ReturnType<typeof setTimeout> | undefined;
  /** When the armed timer is due (performance.now() time). */
  #due = 0;
  /** Whether the timer holds the process open (calls are pending). */
  #held = false;
  /** Whether one timer may serve every call; known after the first. */
  #shared: boolean | undefined;

  constructor(ms: number) {
    if (!Number.isFinite(ms) || ms <= 0) {
      throw new RangeError(
        `storeTimeoutMs must be a positive number of milliseconds: received ${ms}`,
      );
    }
    this.ms = ms;
  }

  /**
   * The promise's outcome, or a {@linkcode DeadlineExceeded} rejection;
   * `mapError` turns either kind of failure into the error the caller
   * rejects with (one promise less than a `.then` of the caller's own).
   */
  guard<T>(
    promise: Promise<T>,
    mapError: (error: unknown) => unknown = same,
  ): Promise<T> {
    if (this.#shared === false) return this.#guardAlone(promise, mapError);
    return new Promise<T>((resolve, reject) => {
      const now = performance.now();
      const entry: Pending = {
        at: now + this.ms,
        reject: (error) => reject(mapError(error)),
      };
      this.#pending.add(entry);
      if (this.#timer === undefined || now > this.#due + LOST_AFTER_MS) {
        this.#arm(this.ms, now);
      } else if (!this.#held) this.#hold(true);
      try {
        promise.then(
          (value) => {
            this.#settle(entry);
            resolve(value);
          },
          (error) => {
            this.#settle(entry);
            entry.reject(error);
          },
        );
      } catch (error) { // not a promise: a store that answered wrongly
        this.#settle(entry);
        entry.reject(error);
      }
    });
  }

  /**
   * One timer per call, armed and cleared with it: where timers cannot be
   * unref'd, a timer may belong to the request that set it (Workers drop
   * it when that request ends), so no timer is shared between calls.
   */
  #guardAlone<T>(
    promise: Promise<T>,
    mapError: (error: unknown) => unknown,
  ): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      const timer = setTimeout(
        () => reject(mapError(new DeadlineExceeded(this.ms))),
        this.ms,
      );
      try {
        promise.then(
          (value) => {
            clearTimeout(timer);
            resolve(value);
          },
          (error) => {
            clearTimeout(timer);
            reject(mapError(error));
          },
        );
      } catch (error) {
        clearTimeout(timer);
        reject(mapError(error));
      }
    });
  }

  #settle(entry: Pending): void {
    this.#pending.delete(entry);
    if (this.#pending.size === 0 && this.#held) this.#hold(false);
  }

  #arm(ms: number, now: number): void {
    if (this.#timer !== undefined) clearTimeout(this.#timer);
    const wait = Math.max(1, ms);
    this.#due = now + wait;
    this.#timer = setTimeout(() => this.#sweep(), wait);
    this.#held = true;
    // The first timer tells whether this runtime can unref one; where it
    // cannot, later calls each get their own (see #guardAlone). The call
    // that armed this one keeps it: its request is still running.
    this.#shared ??= canUnref(this.#timer);
  }

  #hold(on: boolean): void {
    this.#held = on;
    setTimerRef(this.#timer, on);
  }

  #sweep(): void {
    this.#timer = undefined;
    this.#held = false;
    const now = performance.now();
    let next = Infinity;
    for (const entry of this.#pending) {
      if (entry.at <= now + 1) {
        this.#pending.delete(entry);
        entry.reject(new DeadlineExceeded(this.ms));
      } else if (entry.at < next) next = entry.at;
    }
    if (this.#pending.size > 0) this.#arm(next - now, now);
  }
}

/** A timer that fired this much later than due is taken as lost. */
const LOST_AFTER_MS = 1000;

// deno-lint-ignore no-explicit-any
const denoTimers = (globalThis as any).Deno as
  | { refTimer?(id: number): void; unrefTimer?(id: number): void }
  | undefined;

/** Whether {@linkcode setTimerRef} can unref this runtime's timers. */
function canUnref(timer: ReturnType<typeof setTimeout>): boolean {
  // Vercel's edge runtime runs isolates per request, like Workers.
  if (
    typeof (globalThis as { EdgeRuntime?: unknown }).EdgeRuntime === "string"
  ) {
    return false;
  }
  if (typeof timer === "number") {
    return typeof denoTimers?.unrefTimer === "function";
  }
  return typeof (timer as { unref?: unknown })?.unref === "function";
}

/**
 * Lets a timer hold the process open, or not: `Deno.refTimer`/`unrefTimer`
 * for Deno's numeric ids, `ref()`/`unref()` on Node's and Bun's timer
 * objects; nothing where neither exists (Workers, browsers).
 */
function setTimerRef(
  timer: ReturnType<typeof setTimeout> | undefined,
  on: boolean,
): void {
  if (timer === undefined) return;
  if (typeof timer === "number") {
    if (on) denoTimers?.refTimer?.(timer);
    else denoTimers?.unrefTimer?.(timer);
    return;
  }
  const t = timer as { ref?: () => void; unref?: () => void };
  if (on) t.ref?.();
  else t.unref?.();
}
