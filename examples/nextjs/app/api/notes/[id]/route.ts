import { authorize, requireAuth } from "@portcullis/auth";
import { auth, notePolicy, notes } from "../../../../lib/auth";

type Context = { params: Promise<{ id: string }> };

// Only the owner may read a note: anyone else gets 403.
export const GET = auth.route(async (req: Request, { params }: Context) => {
  const { id } = await params;
  const denied = await authorize(req, notePolicy, "read", id);
  if (denied) return denied;
  return Response.json(notes.get(id));
}, requireAuth());
