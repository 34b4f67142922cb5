/**
 * The notes resource: records in the key-value store and the ownership
 * policy that guards them.
 *
 * @module
 */
import {
  definePolicy,
  type KeyValueStore,
  type Policy,
} from "@portcullis/auth";

/** One note. */
export interface Note {
  /** The note's id: 128 random bits, base64url. */
  id: string;
  /** The subject that created it. */
  owner: string;
  /** The text. */
  text: string;
}

/** The longest note, in characters. */
export const MAX_NOTE_LENGTH = 10_000;

/** Notes kept in the key-value store under `note:<id>`. */
export class NoteStore {
  #kv: KeyValueStore;

  /**
   * Makes the note store.
   *
   * @param kv The key-value store.
   */
  constructor(kv: KeyValueStore) {
    this.#kv = kv;
  }

  /**
   * Finds a note.
   *
   * @param id The note's id (untrusted input).
   * @returns The note, or `null`.
   */
  async find(id: string): Promise<Note | null> {
    if (!/^[A-Za-z0-9_-]{22}$/.test(id)) return null;
    const [raw] = await this.#kv.getMany([`note:${id}`]);
    return raw === null ? null : JSON.parse(raw) as Note;
  }

  /**
   * Creates a note with a fresh random id.
   *
   * @param owner The subject creating it.
   * @param text The text.
   * @returns The new note.
   */
  async create(owner: string, text: string): Promise<Note> {
    const bytes = crypto.getRandomValues(new Uint8Array(16));
    const id = btoa(String.fromCharCode(...bytes)).replace(/\+/g, "-")
      .replace(/\//g, "_").replace(/=+$/, "");
    const note = { id, owner, text };
    await this.#kv.put(`note:${id}`, JSON.stringify(note));
    // The owner's index, so deleting an account can find its notes (the
    // key-value protocol cannot list keys).
    const ids = await this.#ownedBy(owner);
    ids.push(id);
    await this.#kv.put(`notes-of:${owner}`, JSON.stringify(ids));
    return note;
  }

  /**
   * Deletes every note of an owner (the account is being deleted).
   *
   * @param owner The subject.
   */
  async deleteOwnedBy(owner: string): Promise<void> {
    for (const id of await this.#ownedBy(owner)) {
      const note = await this.find(id);
      if (note !== null && note.owner === owner) {
        await this.#kv.delete(`note:${id}`);
      }
    }
    await this.#kv.delete(`notes-of:${owner}`);
  }

  async #ownedBy(owner: string): Promise<string[]> {
    const [raw] = await this.#kv.getMany([`notes-of:${owner}`]);
    try {
      const ids = raw === null ? [] : JSON.parse(raw);
      return Array.isArray(ids) ? ids.filter((x) => typeof x === "string") : [];
    } catch {
      return [];
    }
  }

  /**
   * Saves a note's new text.
   *
   * @param note The note with its new text.
   */
  async update(note: Note): Promise<void> {
    await this.#kv.put(`note:${note.id}`, JSON.stringify(note));
  }
}

/**
 * The notes policy: any signed-in principal may `view`; only the owner may
 * `edit`. Anonymous principals may do nothing; an unknown note denies.
 *
 * @param notes Where the notes are.
 * @returns The policy.
 */
export function notePolicy(notes: NoteStore): Policy<"view" | "edit"> {
  return definePolicy<"view" | "edit">({
    async can(principal, action, id) {
      if (principal === null) return false;
      if (action === "view") return true;
      const note = await notes.find(id);
      return note !== null && principal.is(note.owner);
    },
  });
}
