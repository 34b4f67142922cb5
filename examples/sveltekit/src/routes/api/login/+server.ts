import { json } from "@sveltejs/kit";
import type { RequestHandler } from "@sveltejs/kit";
import { credentialsFrom, passwords } from "$lib/server/app.ts";
import { startSession } from "$lib/server/auth.ts";

export const POST: RequestHandler = async (event) => {
  const input = await credentialsFrom(event.request);
  const login = input === null ? null : await passwords.login(
    input.email,
    input.password,
    { address: event.getClientAddress() },
  );
  const session = login?.kind === "ok"
    ? await startSession(event, login)
    : null;
  if (session === null) {
    return json({
      error: "invalid_credentials",
      message: "Wrong email or password",
    }, { status: 401 });
  }
  return json({ token: session.token, expiresAt: session.expiresAt });
};
