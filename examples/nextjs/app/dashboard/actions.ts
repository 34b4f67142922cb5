"use server";
import { redirect } from "next/navigation";
import { revalidatePath } from "next/cache";
import { auth, notes } from "../../lib/auth";

// A server action gets no Request: auth.action() reads the session through
// headers(), checks its revocation, and throws for a cross-origin post.
export async function addNote(form: FormData): Promise<void> {
  const me = await auth.action();
  if (me === null) redirect("/login");
  const text = form.get("text");
  if (typeof text !== "string" || text === "" || text.length > 1000) return;
  const note = { id: crypto.randomUUID(), owner: me.subject, text };
  notes.set(note.id, note);
  revalidatePath("/dashboard");
}
