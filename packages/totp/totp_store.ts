/**
 * Where TOTP secrets and recovery codes live: a small protocol, and an
 * in-memory implementation for tests and examples. `SQLTotpStore`
 * (`stores/sql`) is the one for production.
 *
 * @module
 */

/** One user's TOTP enrolment as the store holds it. */
export interface TotpRecord {
  /** The user's subject id. */
  subject: string;
  /** The shared secret, sealed (AES-GCM) by the authenticator. */
  secret: string;
  /** Unix milliseconds of confirmation; `0` while enrolment is pending. */
  enabledAt: number;
  /** The last time step a code was accepted for; `0` before any. */
  lastStep: number;
  /** Unix milliseconds of the enrolment's start. */
  createdAt: number;
}

/**
 * The operations {@linkcode TotpAuthenticator} needs. The two that accept a
 * code (`enable`, `useStep`) and `consumeRecoveryCode` must be atomic: of two
 * concurrent calls with the same step or code, exactly one answers `true`.
 */
export interface TotpStore {
  /** The user's record, or `null`. */
  find(subject: string): Promise<TotpRecord | null>;
  /**
   * Starts (or restarts) an enrolment: stores a pending record, replacing a
   * pending one. Answers `false`, changing nothing, when TOTP is enabled.
   */
  savePending(record: TotpRecord): Promise<boolean>;
  /**
   * Turns a pending record on, recording `step` as used. Answers `false`
   * when there is no pending record holding exactly `secret`.
   */
  enable(
    subject: string,
    secret: string,
    step: number,
    at: number,
  ): Promise<boolean>;
  /**
   * Records that a code of time step `step` was accepted, only if the
   * enabled record's last step is smaller. Answers whether it did.
   */
  useStep(subject: string, step: number): Promise<boolean>;
  /** Removes the record and every recovery code of the user. */
  remove(subject: string): Promise<void>;
  /** Replaces the user's recovery codes by these hashes. */
  replaceRecoveryCodes(
    subject: string,
    hashes: readonly string[],
    at: number,
  ): Promise<void>;
  /** Deletes one recovery code by hash; answers whether it existed. */
  consumeRecoveryCode(subject: string, hash: string): Promise<boolean>;
  /** How many recovery codes the user has left. */
  countRecoveryCodes(subject: string): Promise<number>;
}

/**
 * A {@linkcode TotpStore} in process memory: for tests and examples only
 * (it forgets everything on restart and is not shared between instances).
 *
 * @example Usage
 * ```ts
 * import { MemoryTotpStore } from "@portcullis/totp";
 * const store = new MemoryTotpStore();
 * await store.find("user_1"); // null
 * ```
 */
export class MemoryTotpStore implements TotpStore {
  #records = new Map<string, TotpRecord>();
  #codes = new Map<string, Set<string>>();

  /** The user's record, or `null`. */
  find(subject: string): Promise<TotpRecord | null> {
    const r = this.#records.get(subject);
    return Promise.resolve(r ? { ...r } : null);
  }

  /** Stores a pending record unless TOTP is enabled. */
  savePending(record: TotpRecord): Promise<boolean> {
    const r = this.#records.get(record.subject);
    if (r && r.enabledAt > 0) return Promise.resolve(false);
    this.#records.set(record.subject, { ...record, enabledAt: 0 });
    return Promise.resolve(true);
  }

  /** Turns a pending record holding `secret` on. */
  enable(
    subject: string,
    secret: string,
    step: number,
    at: number,
  ): Promise<boolean> {
    const r = this.#records.get(subject);
    if (!r || r.enabledAt > 0 || r.secret !== secret) {
      return Promise.resolve(false);
    }
    r.enabledAt = at;
    r.lastStep = step;
    return Promise.resolve(true);
  }

  /** Records a used step if it is newer than the last one. */
  useStep(subject: string, step: number): Promise<boolean> {
    const r = this.#records.get(subject);
    if (!r || r.enabledAt === 0 || r.lastStep >= step) {
      return Promise.resolve(false);
    }
    r.lastStep = step;
    return Promise.resolve(true);
  }

  /** Removes the record and the recovery codes. */
  remove(subject: string): Promise<void> {
    this.#records.delete(subject);
    this.#codes.delete(subject);
    return Promise.resolve();
  }

  /** Replaces the recovery codes. */
  replaceRecoveryCodes(
    subject: string,
    hashes: readonly string[],
  ): Promise<void> {
    this.#codes.set(subject, new Set(hashes));
    return Promise.resolve();
  }

  /** Deletes one recovery code. */
  consumeRecoveryCode(subject: string, hash: string): Promise<boolean> {
    return Promise.resolve(this.#codes.get(subject)?.delete(hash) ?? false);
  }

  /** Counts the recovery codes left. */
  countRecoveryCodes(subject: string): Promise<number> {
    return Promise.resolve(this.#codes.get(subject)?.size ?? 0);
  }
}
