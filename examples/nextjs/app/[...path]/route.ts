// Every account flow: /login, /register, /verify, /password/…, /account,
// /api/me, … — any path no page of the app's own takes.
import { portcullis } from "../../lib/auth";

export const dynamic = "force-dynamic";

async function handler(req: Request): Promise<Response> {
  const { flows } = await portcullis();
  return flows.fetch(req);
}

export {
  handler as DELETE,
  handler as GET,
  handler as PATCH,
  handler as POST,
  handler as PUT,
};
