/**
 * The app's own API beside the account flows: notes, records in the
 * key-value store guarded by an ownership policy, mounted as a module of the
 * app (`notes()`), like a module any project writes for its own routes.
 *
 * - `POST /api/notes` `{text}`: 201 `{id}`; 401 anonymous; 403 unverified
 *   (while the verification module is in the app).
 * - `GET /api/notes/:id`: 200 for any signed-in user; 401 anonymous.
 * - `PUT /api/notes/:id` `{text}`: 200 for the owner, 403 otherwise.
 *
 * Every route takes a session or an API key (`signedInOrKey`), and asks
 * the notes policy for each action (`notes:create`, `notes:view`,
 * `notes:edit`): a key's scopes are those actions, and the policy gate
 * refuses a key whatever its scopes leave out.
 *
 * Deleting an account deletes its notes (the module's lifecycle part).
 *
 * @module
 */
import { Hono } from "hono";
import {
  authorize,
  currentUser,
  definePolicy,
  errorResponse,
  type KeyValueStore,
  type Policy,
} from "@portcullis/auth";
import type {
  AccountsEnv,
  AccountsModule,
  ModuleContext,
} from "@portcullis/accounts";
import {
  beforeWrite,
  handleWith,
  json,
  readBody,
  signedInOrKey,
} from "@portcullis/accounts/plugin";

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

  /** @param kv Where the notes are kept. */
  constructor(kv: KeyValueStore) {
    this.#kv = kv;
  }

  /** The note with this id (untrusted input), or `null`. */
  async find(id: string): Promise<Note | null> {
    if (!/^[A-Za-z0-9_-]{22}$/.test(id)) return null;
    const [raw] = await this.#kv.getMany([`note:${id}`]);
    return raw === null ? null : JSON.parse(raw) as Note;
  }

  /** Creates a note of `owner`'s with a fresh random id. */
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

  /** Deletes every note of an owner (the account is being deleted). */
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

  /** Saves a note's new text. */
  async update(note: Note): Promise<void> {
    await this.#kv.put(`note:${note.id}`, JSON.stringify(note));
  }
}

/** The notes policy's actions: the scopes an API key of this app may have. */
export const NOTE_ACTIONS = [
  "notes:view",
  "notes:create",
  "notes:edit",
] as const;

/** One of {@linkcode NOTE_ACTIONS}. */
export type NoteAction = typeof NOTE_ACTIONS[number];

/**
 * The notes policy: any signed-in principal may `notes:view` and
 * `notes:create`; only the owner may `notes:edit`. Anonymous principals may
 * do nothing; an unknown note denies. (An API key may besides do only what
 * its scopes hold: the gate checks that before this policy is asked.)
 *
 * @param notes Where the notes are.
 * @returns The policy.
 */
export function notePolicy(notes: NoteStore): Policy<NoteAction> {
  return definePolicy<NoteAction>({
    async can(principal, action, id) {
      if (principal === null) return false;
      if (action !== "notes:edit") return true;
      const note = await notes.find(id);
      return note !== null && principal.is(note.owner);
    },
  });
}

/** What the notes' routes use. */
interface NoteParts {
  notes: NoteStore;
  policy: Policy<NoteAction>;
}

/**
 * The notes module: the notes API and its part of the account's lifecycle.
 *
 * @returns The module.
 */
export function notes(): AccountsModule {
  return {
    name: "notes",
    setup(ctx) {
      const store = new NoteStore(ctx.kv);
      const on = handleWith(ctx, { notes: store, policy: notePolicy(store) });
      const routes = new Hono<AccountsEnv>();
      // A session or an API key; each route asks the policy.
      routes.post("/api/notes", signedInOrKey, on(createNote));
      routes.get("/api/notes/:id", signedInOrKey, on(getNote));
      routes.put("/api/notes/:id", signedInOrKey, on(putNote));
      return {
        routes,
        lifecycle: [{
          method: "notes",
          // Notes are data, not credentials: a proof of the address keeps them.
          addressProven: () => Promise.resolve(0),
          accountDeleted: async (subject) => {
            await store.deleteOwnedBy(subject);
            return 0;
          },
        }],
      };
    },
  };
}

async function createNote(
  ctx: ModuleContext,
  { notes, policy }: NoteParts,
  req: Request,
): Promise<Response> {
  const denied = await authorize(req, policy, "notes:create", "");
  if (denied) return denied;
  const refused = await beforeWrite(ctx, req);
  if (refused) return refused;
  const text = await noteText(req);
  if (text === null) return invalidText(req);
  const note = await notes.create(currentUser(req)!, text);
  return json({ id: note.id }, 201, { location: `/api/notes/${note.id}` });
}

async function getNote(
  _ctx: ModuleContext,
  parts: NoteParts,
  req: Request,
  id: string,
): Promise<Response> {
  const note = await allowedNote(parts, req, id, "notes:view");
  if (note instanceof Response) return note;
  return json(note);
}

async function putNote(
  _ctx: ModuleContext,
  parts: NoteParts,
  req: Request,
  id: string,
): Promise<Response> {
  const note = await allowedNote(parts, req, id, "notes:edit");
  if (note instanceof Response) return note;
  const text = await noteText(req);
  if (text === null) return invalidText(req);
  const updated = { ...note, text };
  await parts.notes.update(updated);
  return json(updated);
}

async function noteText(req: Request): Promise<string | null> {
  const body = await readBody(req);
  const text = body?.fields.text;
  if (typeof text !== "string" || text.trim() === "") return null;
  return text.length > MAX_NOTE_LENGTH ? null : text;
}

function invalidText(req: Request): Response {
  return errorResponse(
    req,
    422,
    "invalid_text",
    `A note needs text of 1 to ${MAX_NOTE_LENGTH} characters`,
  );
}

/** The note, when the signed-in user may `action` it; else 404 or 403. */
async function allowedNote(
  { notes, policy }: NoteParts,
  req: Request,
  id: string,
  action: NoteAction,
): Promise<Note | Response> {
  const note = await notes.find(id);
  if (note === null) {
    return errorResponse(req, 404, "not_found", "No such note");
  }
  return await authorize(req, policy, action, note.id) ?? note;
}
