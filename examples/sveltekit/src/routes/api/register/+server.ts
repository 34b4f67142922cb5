import { json } from "@sveltejs/kit";
import type { RequestHandler } from "@sveltejs/kit";
import { credentialsFrom, passwords } from "$lib/server/app.ts";
import { startSession } from "$lib/server/auth.ts";

export const POST: RequestHandler = async (event) => {
  const input = await credentialsFrom(event.request);
  if (input === null) {
    return json(
      { error: "invalid_request", message: "Send {email, password}" },
      { status: 400 },
    );
  }
  const result = await passwords.register(input.email, input.password);
  if (result.kind === "emailTaken") {
    return json({
      error: "email_taken",
      message: "This email is already registered",
    }, { status: 409 });
  }
  if (result.kind === "rejected") {
    return json({ error: "rejected", reason: result.reason }, { status: 422 });
  }
  const session = await startSession(event, result.subject);
  return json(
    {
      subject: result.subject,
      token: session!.token,
      expiresAt: session!.expiresAt,
    },
    { status: 201 },
  );
};
