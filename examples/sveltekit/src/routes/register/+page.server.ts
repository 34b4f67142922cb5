import { fail, redirect } from "@sveltejs/kit";
import type { Actions } from "@sveltejs/kit";
import { passwords } from "$lib/server/app.ts";
import { startSession } from "$lib/server/auth.ts";

export const actions = {
  default: async (event) => {
    const form = await event.request.formData();
    const email = String(form.get("email") ?? "");
    const result = await passwords.register(
      email,
      String(form.get("password") ?? ""),
    );
    if (result.kind === "emailTaken") {
      return fail(409, { email, message: "This email is already registered" });
    }
    if (result.kind === "rejected") {
      return fail(422, { email, message: `Not accepted: ${result.reason}` });
    }
    await startSession(event, result.subject);
    redirect(303, "/");
  },
} satisfies Actions;
