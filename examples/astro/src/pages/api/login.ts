import type { APIRoute } from "astro";
import { credentialsFrom, passwords } from "../../lib/app.ts";
import { startSession } from "../../lib/auth.ts";

export const POST: APIRoute = async (context) => {
  const input = await credentialsFrom(context.request);
  const login = input === null ? null : await passwords.login(
    input.email,
    input.password,
    { address: context.clientAddress },
  );
  const session = login?.kind === "ok"
    ? await startSession(context, login)
    : null;
  if (session === null) {
    return Response.json({
      error: "invalid_credentials",
      message: "Wrong email or password",
    }, { status: 401 });
  }
  return Response.json({ token: session.token, expiresAt: session.expiresAt });
};
