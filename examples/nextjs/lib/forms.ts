// Reading `{email, password}` from a JSON body or an HTML form, and the
// answers both kinds of client expect.
import { errorResponse } from "@portcullis/auth";

/** Whether the client posted an HTML form (and wants pages back). */
export function isForm(req: Request): boolean {
  const type = req.headers.get("content-type") ?? "";
  return type.startsWith("application/x-www-form-urlencoded") ||
    type.startsWith("multipart/form-data");
}

/** The credentials in the body, or `null` when they are missing. */
export async function credentialsOf(
  req: Request,
): Promise<{ email: string; password: string } | null> {
  try {
    if (isForm(req)) {
      const form = await req.formData();
      const email = form.get("email"), password = form.get("password");
      return typeof email === "string" && typeof password === "string"
        ? { email, password }
        : null;
    }
    const body = await req.json();
    return typeof body?.email === "string" && typeof body?.password === "string"
      ? { email: body.email, password: body.password }
      : null;
  } catch {
    return null;
  }
}

/** 400 for a body without an email and a password. */
export function badRequest(req: Request): Response {
  return errorResponse(req, 400, "invalid_input", "Send an email and a password");
}

/** A 303 to `location`, with the session cookie when there is one. */
export function seeOther(location: string, cookie: string | null): Response {
  const res = new Response(null, { status: 303, headers: { location } });
  if (cookie) res.headers.append("set-cookie", cookie);
  return res;
}
