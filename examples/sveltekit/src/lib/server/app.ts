// The example's own parts: users (in memory here; @portcullis/sql in
// production), notes, and the policy that says who may edit a note.
import {
  definePolicy,
  MemoryCredentialStore,
  PasswordAuthenticator,
} from "@portcullis/auth";

export const credentials = new MemoryCredentialStore();
export const passwords = new PasswordAuthenticator({ credentials });

/** A note: its owner and text. */
export interface Note {
  owner: string;
  text: string;
}
export const notes = new Map<string, Note>();

/** Any signed-in user may view a note; only its owner may edit it. */
export const notePolicy = definePolicy<"view" | "edit">({
  can: (who, action, id) => {
    const note = notes.get(id);
    if (who === null || note === undefined) return false;
    return action === "view" || who.is(note.owner);
  },
});

/** The `{ email, password }` of a JSON body, or `null` when malformed. */
export async function credentialsFrom(
  req: Request,
): Promise<{ email: string; password: string } | null> {
  const body = await req.json().catch(() => null);
  if (
    typeof body?.email !== "string" || typeof body?.password !== "string"
  ) return null;
  return { email: body.email, password: body.password };
}
