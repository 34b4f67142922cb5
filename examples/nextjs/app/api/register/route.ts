import { errorResponse, signIn } from "@portcullis/auth";
import { auth, passwords } from "../../../lib/auth";
import { badRequest, credentialsOf, isForm, seeOther } from "../../../lib/forms";

export const POST = auth.route(async (req: Request) => {
  const input = await credentialsOf(req);
  if (input === null) return badRequest(req);
  const result = await passwords.register(input.email, input.password);
  if (result.kind === "emailTaken") {
    return errorResponse(req, 409, "email_taken", "Email taken");
  }
  if (result.kind === "rejected") {
    return errorResponse(req, 400, "invalid_input", result.reason);
  }
  const session = await signIn(req, result.subject);
  if (isForm(req)) return seeOther("/dashboard", session.setCookie);
  const res = Response.json(
    { subject: result.subject, token: session.token, expiresAt: session.expiresAt },
    { status: 201 },
  );
  if (session.setCookie) res.headers.append("set-cookie", session.setCookie);
  return res;
});
