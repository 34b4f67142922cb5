// A throttle whose store fails answers STORE_UNAVAILABLE, never a driver's
// error: the reference app turns that code into 503 with Retry-After (the
// three-instance bench saw 500s from logins during a Redis failover before).
import assert from "node:assert/strict";
import { AuthError } from "../../mod.ts";
import {
  LoginThrottle,
  SlidingWindowLimiter,
  type ThrottleStore,
} from "../../lib/throttle/mod.ts";

class FailingStore implements ThrottleStore {
  constructor(readonly how: "reject" | "throw") {}
  #fail(): Promise<never> {
    const error = new Error("The client is offline");
    if (this.how === "throw") throw error;
    return Promise.reject(error);
  }
  getMany(): Promise<(string | null)[]> {
    return this.#fail();
  }
  put(): Promise<void> {
    return this.#fail();
  }
  delete(): Promise<void> {
    return this.#fail();
  }
  increment(): Promise<number> {
    return this.#fail();
  }
}

function isUnavailable(error: unknown): boolean {
  return error instanceof AuthError && error.code === "STORE_UNAVAILABLE" &&
    error.reason === "failed" && !/offline/.test(error.message);
}

for (const how of ["reject", "throw"] as const) {
  Deno.test(`LoginThrottle: a store that fails (${how}) is STORE_UNAVAILABLE in every call`, async () => {
    const throttle = new LoginThrottle({ store: new FailingStore(how) });
    await assert.rejects(
      throttle.attempt("a@example.com", "192.0.2.1"),
      isUnavailable,
    );
    await assert.rejects(
      throttle.succeeded("a@example.com", "192.0.2.1"),
      isUnavailable,
    );
    await assert.rejects(throttle.reset("a@example.com"), isUnavailable);
  });

  Deno.test(`SlidingWindowLimiter: a store that fails (${how}) is STORE_UNAVAILABLE`, async () => {
    const limiter = new SlidingWindowLimiter(new FailingStore(how));
    const limits = [{ name: "resend", key: "u1", max: 3, windowSeconds: 60 }];
    await assert.rejects(limiter.take(limits), isUnavailable);
    await assert.rejects(limiter.reset(limits), isUnavailable);
  });
}
