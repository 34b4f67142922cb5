// Counter helpers shared by the throttle's limiters (private).
import type { ThrottleStore } from "./throttle_store.ts";

/**
 * Adds 1 to a counter: the store's atomic `increment` when it has one, else
 * a read and a write.
 */
export async function bump(
  store: ThrottleStore,
  key: string,
  ttlSeconds: number,
): Promise<number> {
  if (typeof store.increment === "function") {
    return await store.increment(key, ttlSeconds);
  }
  const [value] = await store.getMany([key]);
  const n = (Number.parseInt(value ?? "0", 10) || 0) + 1;
  await store.put(key, String(n), { ttlSeconds });
  return n;
}

const encoder = new TextEncoder();

/**
 * The store key of one counter: the name, then 128 bits of SHA-256 of the
 * parts, so the store holds no email or address.
 */
export async function counterKey(
  prefix: string,
  name: string,
  ...parts: string[]
): Promise<string> {
  const digest = new Uint8Array(
    await crypto.subtle.digest(
      "SHA-256",
      encoder.encode(`${name}\n${parts.join("\n")}`),
    ),
  );
  let hex = "";
  for (const b of digest.subarray(0, 16)) {
    hex += b.toString(16).padStart(2, "0");
  }
  return `${prefix}${name}:${hex}`;
}

/** An integer counter value; missing or malformed reads as 0. */
export function int(value: string | null): number {
  return Number.parseInt(value ?? "0", 10) || 0;
}

/** Checks a whole-number option. */
export function whole(value: number, name: string, min: number): number {
  if (!Number.isSafeInteger(value) || value < min) {
    throw new RangeError(
      `LoginThrottle ${name} must be a whole number of at least ${min}: received ${value}`,
    );
  }
  return value;
}
