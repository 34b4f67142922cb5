// The throttle's view of its store: any failure of the store (a rejection,
// a synchronous throw, an answer that is not a promise of the right shape)
// becomes one AuthError("STORE_UNAVAILABLE", reason "failed"), so callers
// answer 503 as they do for the session store, never a driver's error.
import { AuthError } from "../auth_error.ts";
import type { ThrottleStore } from "./throttle_store.ts";

const MESSAGE = "Throttle store did not answer: the attempt was not counted";

function unavailable(cause: unknown): AuthError {
  return cause instanceof AuthError && cause.code === "STORE_UNAVAILABLE"
    ? cause
    : new AuthError("STORE_UNAVAILABLE", MESSAGE, { cause, reason: "failed" });
}

async function call<T>(run: () => Promise<T> | T): Promise<T> {
  try {
    return await run();
  } catch (cause) {
    throw unavailable(cause);
  }
}

/** Wraps a store so that each of its failures is `STORE_UNAVAILABLE`. */
export function guarded(store: ThrottleStore): ThrottleStore {
  const wrapped: ThrottleStore = {
    getMany: (keys) => call(() => store.getMany(keys)),
    put: (key, value, options) => call(() => store.put(key, value, options)),
    delete: (key) => call(() => store.delete(key)),
  };
  if (typeof store.increment === "function") {
    const increment = store.increment.bind(store);
    wrapped.increment = (key, ttlSeconds) =>
      call(() => increment(key, ttlSeconds));
  }
  return wrapped;
}
