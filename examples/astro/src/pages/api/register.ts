import type { APIRoute } from "astro";
import { credentialsFrom, passwords } from "../../lib/app.ts";
import { startSession } from "../../lib/auth.ts";

export const POST: APIRoute = async (context) => {
  const input = await credentialsFrom(context.request);
  if (input === null) {
    return Response.json({
      error: "invalid_request",
      message: "Send {email, password}",
    }, { status: 400 });
  }
  const result = await passwords.register(input.email, input.password);
  if (result.kind === "emailTaken") {
    return Response.json({
      error: "email_taken",
      message: "This email is already registered",
    }, { status: 409 });
  }
  if (result.kind === "rejected") {
    return Response.json({ error: "rejected", reason: result.reason }, {
      status: 422,
    });
  }
  const session = await startSession(context, result.subject);
  return Response.json(
    {
      subject: result.subject,
      token: session!.token,
      expiresAt: session!.expiresAt,
    },
    { status: 201 },
  );
};
