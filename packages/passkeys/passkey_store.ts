/**
 * Where passkeys (WebAuthn credentials) and used challenges live.
 *
 * @module
 */

/** One passkey as the store holds it. */
export interface PasskeyRecord {
  /** The credential id, base64url. */
  credentialId: string;
  /** The user (subject id). */
  subject: string;
  /** The COSE public key, base64url. */
  publicKey: string;
  /** The signature counter last seen (0 for authenticators that keep none). */
  counter: number;
  /** How the authenticator can be reached (`internal`, `usb`, `hybrid`, …). */
  transports: string[];
  /** The user's name for it. */
  name: string;
  /** Unix milliseconds of registration. */
  createdAt: number;
  /** Unix milliseconds of the last sign-in with it; 0 before any. */
  lastUsedAt: number;
  /**
   * Whether the authenticator said the credential may be backed up
   * (WebAuthn's BE flag: a synced passkey's provider sets it); fixed for
   * the credential's life, so an assertion that reports another value is
   * refused. `undefined` when it is not known (a passkey stored before the
   * flags were kept): its next accepted use records it.
   */
  backupEligible?: boolean;
  /**
   * Whether it was backed up (synced) at its last use (the BS flag).
   * Default `false`: a device-bound passkey, lost with its device.
   */
  backedUp?: boolean;
}

/** The operations the passkey ceremonies need. */
export interface PasskeyStore {
  /** Adds a passkey; `false` when the credential id is already stored. */
  add(record: PasskeyRecord): Promise<boolean>;
  /** A passkey by credential id, or `null`. */
  find(credentialId: string): Promise<PasskeyRecord | null>;
  /** A user's passkeys, oldest first. */
  listFor(subject: string): Promise<PasskeyRecord[]>;
  /**
   * Moves the counter from `expected` to `next` and stamps the use, only if
   * the stored counter is still `expected` (two concurrent sign-ins with one
   * counter value: one wins); records `backedUp` (the BS flag of this
   * use) when given, and `backupEligible` (the BE flag of this use) only
   * when the store does not know it yet (never over a known one).
   */
  updateCounter(
    credentialId: string,
    expected: number,
    next: number,
    usedAt: number,
    backedUp?: boolean,
    backupEligible?: boolean,
  ): Promise<boolean>;
  /** Renames a user's passkey; `false` when it is not theirs. */
  rename(subject: string, credentialId: string, name: string): Promise<boolean>;
  /** Removes a user's passkey; `false` when it is not theirs. */
  remove(subject: string, credentialId: string): Promise<boolean>;
}

/**
 * Remembers challenges until they are used, so each is accepted once.
 * `consume` must be atomic (with portcullis: a `VerificationTokenStore`).
 * Expired challenges are refused at use whatever the store holds; the
 * authenticator also calls `deleteExpired` as it issues challenges, so
 * ceremonies that are started and never finished do not pile up.
 */
export interface ChallengeStore {
  /** Records a challenge id that may be used until `expiresAt` (unix ms). */
  put(id: string, expiresAt: number): Promise<void>;
  /** Removes the id; answers whether it was there (first use). */
  consume(id: string): Promise<boolean>;
  /**
   * Removes every challenge whose `expiresAt` is at or before `now` (unix
   * ms). A store whose entries expire by themselves (a TTL) may do nothing.
   */
  deleteExpired(now: number): Promise<void>;
}

/**
 * A {@linkcode PasskeyStore} and {@linkcode ChallengeStore} in process
 * memory, for tests and examples.
 *
 * @example Usage
 * ```ts
 * import { MemoryPasskeyStore } from "@portcullis/passkeys";
 * const store = new MemoryPasskeyStore();
 * await store.find("abc"); // null
 * ```
 */
export class MemoryPasskeyStore implements PasskeyStore, ChallengeStore {
  #keys = new Map<string, PasskeyRecord>();
  #challenges = new Map<string, number>();

  /** Adds a passkey. */
  add(record: PasskeyRecord): Promise<boolean> {
    if (this.#keys.has(record.credentialId)) return Promise.resolve(false);
    this.#keys.set(record.credentialId, structuredClone(record));
    return Promise.resolve(true);
  }

  /** A passkey by id. */
  find(credentialId: string): Promise<PasskeyRecord | null> {
    const r = this.#keys.get(credentialId);
    return Promise.resolve(r ? structuredClone(r) : null);
  }

  /** A user's passkeys. */
  listFor(subject: string): Promise<PasskeyRecord[]> {
    return Promise.resolve(
      [...this.#keys.values()].filter((r) => r.subject === subject).map((r) =>
        structuredClone(r)
      ),
    );
  }

  /** Compare-and-set of the counter; BE recorded only when unknown. */
  updateCounter(
    credentialId: string,
    expected: number,
    next: number,
    usedAt: number,
    backedUp?: boolean,
    backupEligible?: boolean,
  ): Promise<boolean> {
    const r = this.#keys.get(credentialId);
    if (!r || r.counter !== expected) return Promise.resolve(false);
    r.counter = next;
    r.lastUsedAt = usedAt;
    if (backedUp !== undefined) r.backedUp = backedUp;
    if (r.backupEligible === undefined && backupEligible !== undefined) {
      r.backupEligible = backupEligible;
    }
    return Promise.resolve(true);
  }

  /** Renames. */
  rename(
    subject: string,
    credentialId: string,
    name: string,
  ): Promise<boolean> {
    const r = this.#keys.get(credentialId);
    if (!r || r.subject !== subject) return Promise.resolve(false);
    r.name = name;
    return Promise.resolve(true);
  }

  /** Removes. */
  remove(subject: string, credentialId: string): Promise<boolean> {
    const r = this.#keys.get(credentialId);
    if (!r || r.subject !== subject) return Promise.resolve(false);
    return Promise.resolve(this.#keys.delete(credentialId));
  }

  /** Records a challenge. */
  put(id: string, expiresAt: number): Promise<void> {
    this.#challenges.set(id, expiresAt);
    return Promise.resolve();
  }

  /** Consumes a challenge once. */
  consume(id: string): Promise<boolean> {
    return Promise.resolve(this.#challenges.delete(id));
  }

  /** Drops expired challenges. */
  deleteExpired(now: number): Promise<void> {
    for (const [id, expiresAt] of this.#challenges) {
      if (expiresAt <= now) this.#challenges.delete(id);
    }
    return Promise.resolve();
  }

  /** How many challenges are stored, expired ones not yet removed included. */
  get challengeCount(): number {
    return this.#challenges.size;
  }
}
