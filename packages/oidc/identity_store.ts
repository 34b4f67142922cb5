/**
 * Where the links between a provider's users and the application's live:
 * `(provider, provider subject) → user`.
 *
 * @module
 */

/** One link. */
export interface IdentityRecord {
  /** The provider's id. */
  provider: string;
  /** The `sub` at that provider. */
  providerSubject: string;
  /** The application's user (subject id). */
  subject: string;
  /** The email the provider gave when the link was made. */
  email: string;
  /** Unix milliseconds of the link. */
  createdAt: number;
}

/** The operations the OIDC sign-in needs; `link` must be atomic. */
export interface IdentityStore {
  /** The link of a provider's user, or `null`. */
  find(
    provider: string,
    providerSubject: string,
  ): Promise<IdentityRecord | null>;
  /**
   * Adds a link; answers `false`, changing nothing, when that provider's
   * user is already linked (to anyone).
   */
  link(record: IdentityRecord): Promise<boolean>;
  /** Every link of a user. */
  listFor(subject: string): Promise<IdentityRecord[]>;
  /** Removes one link of a user; answers whether it existed. */
  unlink(
    subject: string,
    provider: string,
    providerSubject: string,
  ): Promise<boolean>;
}

/**
 * An {@linkcode IdentityStore} in process memory, for tests and examples.
 *
 * @example Usage
 * ```ts
 * import { MemoryIdentityStore } from "@portcullis/oidc";
 * const store = new MemoryIdentityStore();
 * await store.find("example", "sub-1"); // null
 * ```
 */
export class MemoryIdentityStore implements IdentityStore {
  #links = new Map<string, IdentityRecord>();

  /** The link, or `null`. */
  find(
    provider: string,
    providerSubject: string,
  ): Promise<IdentityRecord | null> {
    const r = this.#links.get(`${provider}\n${providerSubject}`);
    return Promise.resolve(r ? { ...r } : null);
  }

  /** Adds a link unless one exists. */
  link(record: IdentityRecord): Promise<boolean> {
    const key = `${record.provider}\n${record.providerSubject}`;
    if (this.#links.has(key)) return Promise.resolve(false);
    this.#links.set(key, { ...record });
    return Promise.resolve(true);
  }

  /** A user's links. */
  listFor(subject: string): Promise<IdentityRecord[]> {
    return Promise.resolve(
      [...this.#links.values()].filter((r) => r.subject === subject),
    );
  }

  /** Removes a link. */
  unlink(
    subject: string,
    provider: string,
    providerSubject: string,
  ): Promise<boolean> {
    const key = `${provider}\n${providerSubject}`;
    if (this.#links.get(key)?.subject !== subject) {
      return Promise.resolve(false);
    }
    return Promise.resolve(this.#links.delete(key));
  }
}
