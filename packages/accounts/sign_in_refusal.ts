/**
 * The answer to a sign-in a module refused (a banned account): what a wrong
 * password gets, whichever method proved the subject.
 *
 * @module
 */
import { safeNextPath } from "@portcullis/auth";
import { wantsHtml } from "@portcullis/auth/http";
import type { ModuleContext } from "./context.ts";
import { isFormPost } from "./request_body.ts";
import { json, render } from "./respond.ts";
import { loginAutofill, loginButtons } from "./pages.ts";

/** What a wrong password is told (`POST /login`). */
const INVALID_CREDENTIALS = "Email or password is incorrect";

/**
 * 401 `invalid_credentials` as JSON, or for a browser (a form post, a page
 * navigation such as a provider's callback) the login page with the error
 * a wrong password gets, at 401.
 *
 * @param ctx The app.
 * @param req The refused request.
 * @returns The answer.
 */
export function refusedSignIn(ctx: ModuleContext, req: Request): Response {
  const browser = isFormPost(req) || (req.method === "GET" && wantsHtml(req));
  if (!browser) {
    return json(
      { error: "invalid_credentials", message: INVALID_CREDENTIALS },
      401,
    );
  }
  const next = safeNextPath(new URL(req.url).searchParams.get("next"));
  return render(
    ctx,
    ctx.views.login({
      next,
      error: INVALID_CREDENTIALS,
      flash: null,
      extra: loginButtons(ctx, next),
      autofill: loginAutofill(ctx),
    }),
    401,
  );
}
