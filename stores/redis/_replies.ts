/**
 * Reading node-redis replies: strings by default, buffers when the client
 * was given a type mapping that asks for them.
 *
 * @module
 */

const decoder = new TextDecoder();

/** A reply value as a string: node-redis answers strings, or buffers when a type mapping says so. */
export function text(value: unknown): string | null {
  if (value === null || value === undefined) return null;
  if (typeof value === "string") return value;
  if (value instanceof Uint8Array) return decoder.decode(value);
  return String(value);
}

/** Checks an `MGET` reply and answers its values as strings. */
export function values(reply: unknown, expected: number): (string | null)[] {
  if (!Array.isArray(reply) || reply.length !== expected) {
    throw new Error(
      `Redis answered MGET with ${
        Array.isArray(reply) ? reply.length : "no"
      } values: expected ${expected}`,
    );
  }
  return reply.map(text);
}
