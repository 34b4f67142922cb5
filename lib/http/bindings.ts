/**
 * Where the installable `identityMiddleware()` finds its configuration:
 * the bindings object a platform hands to each request (Cloudflare's `env`)
 * or the process environment (`Deno.env`, `process.env`), and the default
 * revocation store. Kept apart from the middleware so that reading
 * configuration never runs on the request path once it is built.
 *
 * @module
 */
import { DenoKV } from "../kv/deno_kv.ts";
import type { KeyValueStore } from "../kv/key_value_store.ts";
import { MemoryKV } from "../kv/memory_kv.ts";

/** A bindings object: names to values, as Cloudflare passes `env`. */
export type Bindings = Readonly<Record<string, unknown>>;

/** The store choices of the installable middleware. */
export type StoreChoice = "deno-kv" | "memory" | KeyValueStore;

/**
 * The bindings object among a handler's extra arguments: the first one,
 * when it is an object that holds `secretName` as a string. Deno and Node
 * pass connection info in that place, and then the process environment is
 * read instead (`null`).
 *
 * @param rest The handler's arguments after the request.
 * @param secretName The binding that must be present.
 */
export function bindingsFrom(
  rest: readonly unknown[],
  secretName: string,
): Bindings | null {
  const candidate = rest[0] as Record<string, unknown> | undefined;
  return typeof candidate === "object" && candidate !== null &&
      typeof candidate[secretName] === "string"
    ? candidate
    : null;
}

/**
 * Reads one string binding: from `env` when given, else from the process
 * environment.
 *
 * @param env The bindings object, or `null` for the process environment.
 * @param name The binding's name.
 */
export function readBinding(
  env: Bindings | null,
  name: string,
): string | undefined {
  if (env) {
    return typeof env[name] === "string" ? env[name] as string : undefined;
  }
  const g = globalThis as {
    Deno?: { env: { get(n: string): string | undefined } };
    process?: { env: Record<string, string | undefined> };
  };
  try {
    return g.Deno?.env.get(name) ?? g.process?.env[name];
  } catch {
    return undefined; // Deno without --allow-env for this name
  }
}

function denoOpenKv(): unknown {
  return (globalThis as { Deno?: { openKv?: unknown } }).Deno?.openKv;
}

/**
 * Refuses, at startup, a store choice this runtime cannot honour: the
 * default `"deno-kv"` needs Deno with KV enabled.
 *
 * @throws {TypeError} With what to do instead.
 */
export function checkStoreChoice(choice: StoreChoice): void {
  if (choice !== "deno-kv" || typeof denoOpenKv() === "function") return;
  const onDeno = typeof (globalThis as { Deno?: unknown }).Deno === "object";
  throw new TypeError(
    onDeno
      ? 'identityMiddleware() keeps revocations in Deno KV by default, and Deno KV is not enabled: run with --unstable-kv (or add "unstable": ["kv"] to deno.json), or pass store: a KeyValueStore'
      : "identityMiddleware() keeps revocations in Deno KV by default, which this runtime does not have: pass store: a KeyValueStore (Upstash, Redis, libSQL, Cloudflare KV)",
  );
}

/** Opens the chosen revocation store. */
export async function openStore(choice: StoreChoice): Promise<KeyValueStore> {
  if (choice === "memory") return new MemoryKV();
  if (choice === "deno-kv") return await DenoKV.open();
  return choice;
}
