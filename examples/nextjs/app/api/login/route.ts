import { errorResponse, signIn } from "@portcullis/auth";
import { auth, passwords } from "../../../lib/auth";
import { badRequest, credentialsOf, isForm, seeOther } from "../../../lib/forms";

export const POST = auth.route(async (req: Request) => {
  const input = await credentialsOf(req);
  if (input === null) return badRequest(req);
  const login = await passwords.login(input.email, input.password);
  if (login.kind === "throttled") {
    return errorResponse(req, 429, "too_many_requests", "Try later", {
      "retry-after": String(login.retryAfterSeconds),
    });
  }
  // signIn answers null when the password changed meanwhile.
  const session = login.kind === "ok" ? await signIn(req, login) : null;
  if (login.kind !== "ok" || session === null) {
    if (isForm(req)) return seeOther("/login?error=1", null);
    return errorResponse(req, 401, "invalid_credentials", "Wrong email or password");
  }
  if (isForm(req)) return seeOther("/dashboard", session.setCookie);
  const res = Response.json({
    subject: login.subject,
    token: session.token,
    expiresAt: session.expiresAt,
  });
  if (session.setCookie) res.headers.append("set-cookie", session.setCookie);
  return res;
});
