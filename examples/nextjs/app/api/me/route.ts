import { currentUser, requireAuth } from "@portcullis/auth";
import { auth, credentials } from "../../../lib/auth";

export const GET = auth.route(async (req: Request) => {
  const subject = currentUser(req)!;
  const user = await credentials.findById(subject);
  return Response.json({ subject, email: user?.email ?? null });
}, requireAuth());
