/**
 * "My sessions": an opt-in list of a subject's live sessions, kept beside
 * the denylist in the key-value store.
 *
 * @module
 */
import type { KeyValueStore } from "../kv/key_value_store.ts";
import type { Identity, SessionManager } from "./session_manager.ts";
import type { SessionStore } from "./session_store.ts";
import { KeyedQueue } from "../_common/keyed_queue.ts";

/** One live session as {@linkcode SessionRegistry.list} answers it. */
export interface SessionInfo {
  /** The session id (the token's jti). */
  readonly id: string;
  /** When the session began, in unix milliseconds. */
  readonly createdAt: number;
  /** When it was last seen, in unix milliseconds (at most an hour stale). */
  readonly lastSeenAt: number;
  /** The `User-Agent` it began with (cleaned, at most 256 characters). */
  readonly userAgent: string | null;
  /** When its token expires, in unix seconds. */
  readonly expiresAt: number;
  /** What it is bound to: `"device"` (DBSC), `"dpop"`, or `null`. */
  readonly binding: "device" | "dpop" | null;
  /**
   * The operator holding it on the user's behalf (an impersonation
   * session's actor), or `null` for the user's own.
   */
  readonly actor: string | null;
}

/** Options of {@linkcode SessionRegistry}. */
export interface SessionRegistryOptions {
  /** Where the lists live: the key-value store of the denylist. */
  kv: KeyValueStore;
  /** The sessions; `revoke` goes through its denylist. */
  manager: SessionManager;
  /** The denylist, to leave revoked sessions out of the list. */
  revocations: SessionStore;
  /** The least time between two last-seen writes, in seconds; default 3600. */
  touchEverySeconds?: number;
  /** The clock, in unix milliseconds; default `Date.now`. */
  now?: () => number;
  /** Key prefix; default `"portcullis:sessions:"`. */
  prefix?: string;
  /** How many sessions one subject's list keeps (newest); default 100. */
  maxPerSubject?: number;
}

const REMEMBERED = 10_000;
/** How long a write waits for the subject's earlier ones, at most. */
const QUEUE_WAIT_MS = 2000;

/**
 * Lists and revokes a subject's sessions. The app calls
 * {@linkcode SessionRegistry.add} after each sign-in and
 * {@linkcode SessionRegistry.seen} on authenticated requests; `seen`
 * writes at most once an hour per session and isolate, and the caller does
 * not wait for it, so an ordinary authenticated request costs no store
 * round trip (one map lookup). Revocation stays the denylist's job: `revoke` puts the
 * jti there through the manager, and `list` leaves out sessions the
 * denylist refuses (a per-subject sign-out everywhere included).
 *
 * A subject's sessions are one JSON value, read and written back. One
 * registry takes a subject's writes one after another, so writes in one
 * process or isolate never lose each other. Two isolates writing one
 * subject's list in the same instant can still lose an entry (the store
 * has no compare-and-set): the session stays revocable by a sign-out
 * everywhere, and its next hourly `seen` puts it back.
 *
 * @example Usage
 * ```ts
 * import assert from "node:assert/strict";
 * import { KVSessionStore, MemoryKV, SecretProvider, SessionManager } from "@portcullis/auth";
 * import { SessionRegistry } from "@portcullis/auth/session-registry";
 * const kv = new MemoryKV();
 * const revocations = new KVSessionStore(kv);
 * const manager = new SessionManager({
 *   secret: SecretProvider.fromValue(
 *     btoa(String.fromCharCode(...crypto.getRandomValues(new Uint8Array(32)))),
 *   ),
 *   store: revocations,
 * });
 * const registry = new SessionRegistry({ kv, manager, revocations });
 * const token = await manager.issue("user_1");
 * const identity = (await manager.resolve(token))!;
 * await registry.add(identity, "Firefox");
 * assert.equal((await registry.list("user_1"))[0].id, identity.jti);
 * assert.equal(await registry.revoke("user_1", identity.jti), true);
 * assert.equal(await manager.resolve(token), null);
 * ```
 */
export class SessionRegistry {
  #kv: KeyValueStore;
  #manager: SessionManager;
  #revocations: SessionStore;
  #touchMs: number;
  #now: () => number;
  #prefix: string;
  #max: number;
  #lastWrite = new Map<string, number>();
  /** A subject's writes, one after another. */
  #queue = new KeyedQueue(QUEUE_WAIT_MS);

  /**
   * Checks the options once.
   *
   * @param options See {@linkcode SessionRegistryOptions}.
   * @throws {TypeError} When `kv`, `manager` or `revocations` is missing.
   * @throws {RangeError} When a number is not a positive whole number.
   */
  constructor(options: SessionRegistryOptions) {
    if (!options?.kv || !options.manager || !options.revocations) {
      throw new TypeError(
        "SessionRegistry needs kv, manager and revocations: pass the key-value store, the SessionManager and its SessionStore",
      );
    }
    const every = options.touchEverySeconds ?? 3600;
    const max = options.maxPerSubject ?? 100;
    for (
      const [name, n] of [["touchEverySeconds", every], [
        "maxPerSubject",
        max,
      ]] as const
    ) {
      if (!Number.isSafeInteger(n) || n <= 0) {
        throw new RangeError(
          `${name} must be a positive whole number: received ${n}`,
        );
      }
    }
    this.#kv = options.kv;
    this.#manager = options.manager;
    this.#revocations = options.revocations;
    this.#touchMs = every * 1000;
    this.#now = options.now ?? Date.now;
    this.#prefix = options.prefix ?? "portcullis:sessions:";
    this.#max = max;
  }

  /**
   * Records a session that just began (call it after `signIn`). A session
   * listed already (a device-bound one that signed in again, listed with
   * its absolute end while its token lives minutes) keeps the later end.
   *
   * @param identity The new session's identity.
   * @param userAgent The client's `User-Agent`, or `null`.
   * @throws What the key-value store throws.
   */
  async add(identity: Identity, userAgent: string | null): Promise<void> {
    const now = Math.floor(this.#now());
    this.#remember(identity.jti, now);
    await this.#update(identity.subject, (all) => {
      all[identity.jti] = {
        c: identity.issuedAt,
        l: now,
        u: cleanUserAgent(userAgent),
        e: Math.max(all[identity.jti]?.e ?? 0, identity.expiresAt),
        b: identity.binding,
        a: identity.actor,
      };
    });
  }

  /**
   * Notes that a session was used. Answers at once, without touching the
   * store: `null` when the last write for this session (in this isolate)
   * is less than `touchEverySeconds` old; otherwise the write it started,
   * which never rejects (`true` when written). Do not await it on the
   * request's path: answer first (on Cloudflare Workers hand it to
   * `ctx.waitUntil`).
   *
   * @param identity The request's identity.
   * @param userAgent The client's `User-Agent`, or `null` (used only when
   * the entry was lost and is put back).
   * @returns `null`, or the started write.
   */
  seen(identity: Identity, userAgent: string | null): Promise<boolean> | null {
    // An API key is no session: it is listed where the keys are.
    if (identity.apiKey !== undefined) return null;
    const now = Math.floor(this.#now());
    const last = this.#lastWrite.get(identity.jti);
    if (last !== undefined && now - last < this.#touchMs) return null;
    this.#remember(identity.jti, now);
    return this.#update(identity.subject, (all) => {
      const entry = all[identity.jti];
      all[identity.jti] = entry
        ? { ...entry, l: now, e: Math.max(entry.e, identity.expiresAt) }
        : {
          c: identity.issuedAt,
          l: now,
          u: cleanUserAgent(userAgent),
          e: identity.expiresAt,
          b: identity.binding,
          a: identity.actor,
        };
    }).then(() => true, () => false);
  }

  /**
   * A subject's live sessions, newest first: expired and revoked ones are
   * left out (and dropped from the stored list). Writes this registry
   * started before (a deferred `seen` included) land first.
   *
   * @param subject The subject.
   * @returns The sessions.
   * @throws What the stores throw.
   */
  async list(subject: string): Promise<SessionInfo[]> {
    await this.#queue.settled(subject); // this registry's own writes first
    const all = await this.#read(subject);
    const nowS = this.#now() / 1000;
    const ids = Object.keys(all);
    const revoked = await Promise.all(
      ids.map((id) => this.#revocations.isRevoked(subject, id, all[id].c)),
    );
    // Only a strict `false` is live: a broken store's `undefined` is not.
    const live = ids.filter((id, i) =>
      revoked[i] === false && all[id].e > nowS
    );
    if (live.length < ids.length) {
      await this.#update(subject, (stored) => {
        for (const id of Object.keys(stored)) {
          if (!live.includes(id) && ids.includes(id)) delete stored[id];
        }
      });
    }
    return live.map((id) => sessionInfo(id, all[id])).sort((a, b) =>
      b.createdAt - a.createdAt || (a.id < b.id ? 1 : -1)
    );
  }

  /**
   * Revokes one of a subject's sessions through the manager's denylist and
   * drops it from the list.
   *
   * @param subject The subject (the signed-in user: another subject's
   * session id is not found).
   * @param id The session id.
   * @returns `true` when the session was the subject's and is now revoked;
   * `false` for an unknown id.
   * @throws What the stores throw.
   */
  async revoke(subject: string, id: string): Promise<boolean> {
    const entry = (await this.#read(subject))[id];
    if (entry === undefined) return false;
    await this.#manager.revoke({
      subject,
      jti: id,
      issuedAt: entry.c,
      expiresAt: entry.e,
      binding: entry.b,
    });
    await this.remove(subject, id);
    return true;
  }

  /**
   * Drops a session from the list without revoking it (after a sign-out
   * that already revoked it). A `seen` for it in the next
   * `touchEverySeconds` (a request of that session still in flight) writes
   * nothing, so it does not come back.
   *
   * @param subject The subject.
   * @param id The session id.
   */
  async remove(subject: string, id: string): Promise<void> {
    this.#remember(id, Math.floor(this.#now()));
    await this.#update(subject, (all) => void delete all[id]);
  }

  /**
   * Forgets every session of a subject (after a sign-out everywhere or an
   * account deletion; the denylist does the revoking).
   *
   * @param subject The subject.
   */
  async clear(subject: string): Promise<void> {
    await this.#queue.run(
      subject,
      () => this.#kv.delete(this.#prefix + subject),
    );
  }

  #remember(jti: string, at: number): void {
    if (this.#lastWrite.size >= REMEMBERED) {
      this.#lastWrite.delete(this.#lastWrite.keys().next().value!);
    }
    this.#lastWrite.delete(jti);
    this.#lastWrite.set(jti, at);
  }

  #read(subject: string): Promise<Sessions> {
    return readSessions(this.#kv, this.#prefix + subject);
  }

  /** Reads the subject's list, changes it and writes it back, queued. */
  #update(subject: string, change: (all: Sessions) => void): Promise<void> {
    return this.#queue.run(subject, async () => {
      const all = await this.#read(subject);
      change(all);
      await writeSessions(this.#kv, this.#prefix + subject, all, {
        nowS: this.#now() / 1000,
        max: this.#max,
      });
    });
  }
}

// A subject's session list, stored as one JSON value in the key-value store.

/**
 * One session: created, last seen (ms), user agent, expiry (s), what it
 * is bound to (absent for an ordinary session), and the operator holding it
 * (absent for the user's own).
 */
type Entry = {
  c: number;
  l: number;
  u: string | null;
  e: number;
  b?: "device" | "dpop";
  /** The operator holding it for the user (impersonation). */
  a?: string;
};
/** A subject's sessions by jti. */
type Sessions = Record<string, Entry>;

/** Reads a list; a missing or unreadable value is an empty list. */
async function readSessions(
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
async function writeSessions(
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
function sessionInfo(id: string, entry: Entry): SessionInfo {
  return {
    id,
    createdAt: entry.c,
    lastSeenAt: entry.l,
    userAgent: entry.u,
    expiresAt: entry.e,
    binding: entry.b ?? null,
    actor: typeof entry.a === "string" ? entry.a : null,
  };
}

// deno-lint-ignore no-control-regex
const CONTROL = /[\u0000-\u001f\u007f-\u009f]/g;

/** A `User-Agent` without control characters, at most 256 characters. */
function cleanUserAgent(value: string | null): string | null {
  const clean = value?.replace(CONTROL, "").trim().slice(0, 256) ?? "";
  return clean === "" ? null : clean;
}

// The types this entry's API names, so its documentation is whole.
export type { KeyValueStore, PutOptions } from "../kv/key_value_store.ts";
export type {
  Identity,
  IssuedSession,
  SessionManager,
} from "./session_manager.ts";
export type { SessionStore } from "./session_store.ts";
