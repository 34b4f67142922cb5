// A subject's session list as one JSON value in the key-value store.
// Internal to lib/session (SessionRegistry).
import type { KeyValueStore } from "../kv/key_value_store.ts";
import type { SessionInfo } from "./session_registry.ts";

/**
 * One session: created, last seen (ms), user agent, expiry (s), and what it
 * is bound to (absent for an ordinary session).
 */
export type Entry = {
  c: number;
  l: number;
  u: string | null;
  e: number;
  b?: "device" | "dpop";
};
/** A subject's sessions by jti. */
export type Sessions = Record<string, Entry>;

/** Reads a list; a missing or unreadable value is an empty list. */
export async function readSessions(
  kv: KeyValueStore,
  key: string,
): Promise<Sessions> {
  const [raw] = await kv.getMany([key]);
  if (raw === null) return {};
  try {
    const data = JSON.parse(raw);
    return typeof data === "object" && data !== null ? data : {};
  } catch {
    return {};
  }
}

/**
 * Writes a list back: expired entries dropped, the newest `max` kept, the
 * value living as long as its longest session (at least 60 s); an empty
 * list deletes the key.
 */
export async function writeSessions(
  kv: KeyValueStore,
  key: string,
  all: Sessions,
  limits: { nowS: number; max: number },
): Promise<void> {
  const ids = Object.keys(all).filter((id) => all[id].e > limits.nowS)
    .sort((a, b) => all[b].c - all[a].c).slice(0, limits.max);
  if (ids.length === 0) return await kv.delete(key);
  const kept: Sessions = {};
  let until = 0;
  for (const id of ids) {
    kept[id] = all[id];
    until = Math.max(until, all[id].e);
  }
  await kv.put(key, JSON.stringify(kept), {
    ttlSeconds: Math.max(60, Math.ceil(until - limits.nowS)),
  });
}

/** An entry as `SessionRegistry.list` answers it. */
export function sessionInfo(id: string, entry: Entry): SessionInfo {
  return {
    id,
    createdAt: entry.c,
    lastSeenAt: entry.l,
    userAgent: entry.u,
    expiresAt: entry.e,
    binding: entry.b ?? null,
  };
}

// deno-lint-ignore no-control-regex
const CONTROL = /[\u0000-\u001f\u007f-\u009f]/g;

/** A `User-Agent` without control characters, at most 256 characters. */
export function cleanUserAgent(value: string | null): string | null {
  const clean = value?.replace(CONTROL, "").trim().slice(0, 256) ?? "";
  return clean === "" ? null : clean;
}
