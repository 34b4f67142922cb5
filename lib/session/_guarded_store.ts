// Every call the session manager makes to its SessionStore goes through
// here: under a deadline, and with any failure turned into one
// AuthError("STORE_UNAVAILABLE") whose reason says whether the store failed
// or ran out of time. Callers never see a driver's error.
import { AuthError } from "../auth_error.ts";
import { Deadline, DeadlineExceeded } from "../kv/deadline.ts";
import type { SessionStore } from "./session_store.ts";

function unavailable(message: string, cause: unknown): AuthError {
  return new AuthError("STORE_UNAVAILABLE", message, {
    cause,
    reason: cause instanceof DeadlineExceeded ? "timeout" : "failed",
  });
}

const NO_IDENTITY = "Session store did not answer: no identity was established";
const NOT_REVOKED = "Session store did not answer: nothing was revoked";
const noIdentity = (cause: unknown) => unavailable(NO_IDENTITY, cause);

/** A {@linkcode SessionStore} under a deadline, failing as `AuthError`. */
export class GuardedStore {
  #store: SessionStore;
  #deadline: Deadline;

  constructor(store: SessionStore, timeoutMs: number) {
    this.#store = store;
    this.#deadline = new Deadline(timeoutMs);
  }

  /** See {@linkcode SessionStore.isRevoked}; no `async` frame on this path. */
  isRevoked(
    subject: string,
    jti: string,
    issuedAtMs: number,
  ): Promise<boolean> {
    let answer: Promise<boolean>;
    try {
      answer = this.#store.isRevoked(subject, jti, issuedAtMs);
    } catch (cause) {
      return Promise.reject(unavailable(NO_IDENTITY, cause));
    }
    return this.#deadline.guard(answer, noIdentity);
  }

  /**
   * See {@linkcode SessionStore.peek}: `undefined` when the store has no
   * such answer or its `peek` throws (the caller then asks, under the
   * deadline, and fails closed).
   */
  peek(subject: string, jti: string, issuedAtMs: number): boolean | undefined {
    if (this.#store.peek === undefined) return undefined;
    try {
      const answer: unknown = this.#store.peek(subject, jti, issuedAtMs);
      if (typeof answer === "boolean") return answer;
      // An asynchronous `peek` is not one: ignore its answer, and its
      // failure too (no unhandled rejection).
      const then = (answer as { then?: unknown } | null)?.then;
      if (typeof then === "function") {
        (answer as Promise<unknown>).then(undefined, () => {});
      }
      return undefined;
    } catch {
      return undefined;
    }
  }

  /** See {@linkcode SessionStore.revoke}. */
  revoke(jti: string, ttlSeconds: number): Promise<void> {
    return this.#call(() => this.#store.revoke(jti, ttlSeconds));
  }

  /** See {@linkcode SessionStore.revokeAll}. */
  revokeAll(
    subject: string,
    cutoffMs: number,
    ttlSeconds: number,
  ): Promise<void> {
    return this.#call(() =>
      this.#store.revokeAll(subject, cutoffMs, ttlSeconds)
    );
  }

  async #call(f: () => Promise<void>): Promise<void> {
    try {
      await this.#deadline.guard(f());
    } catch (cause) {
      throw unavailable(NOT_REVOKED, cause);
    }
  }
}
