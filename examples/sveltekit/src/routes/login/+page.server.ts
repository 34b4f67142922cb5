import { fail, redirect } from "@sveltejs/kit";
import { safeNextPath } from "@portcullis/auth";
import type { Actions } from "@sveltejs/kit";
import { passwords } from "$lib/server/app.ts";
import { startSession } from "$lib/server/auth.ts";

export const actions = {
  default: async (event) => {
    const form = await event.request.formData();
    const email = String(form.get("email") ?? "");
    const password = String(form.get("password") ?? "");
    const login = await passwords.login(email, password, {
      address: event.getClientAddress(),
    });
    // signIn answers null when the password changed meanwhile: a wrong password.
    const session = login.kind === "ok"
      ? await startSession(event, login)
      : null;
    if (session === null) {
      return fail(login.kind === "throttled" ? 429 : 401, {
        email,
        message: "Wrong email or password",
      });
    }
    redirect(303, safeNextPath(event.url.searchParams.get("next") ?? "/"));
  },
} satisfies Actions;
