import { requireAuth, signOut } from "@portcullis/auth";
import { auth } from "../../../lib/auth";
import { isForm, seeOther } from "../../../lib/forms";

export const POST = auth.route(async (req: Request) => {
  const { clearCookie } = await signOut(req);
  if (isForm(req)) return seeOther("/login", clearCookie);
  const res = new Response(null, { status: 204 });
  if (clearCookie) res.headers.append("set-cookie", clearCookie);
  return res;
}, requireAuth());
