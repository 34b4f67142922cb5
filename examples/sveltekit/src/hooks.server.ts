import type { Handle } from "@sveltejs/kit";
import { currentUser } from "@portcullis/auth";
import { portcullis } from "$lib/server/auth";

export const handle: Handle = async ({ event, resolve }) => {
  const { flows, identify } = await portcullis();
  // Every path no route of the app's own takes: the account flows
  // (/login, /register, /verify, /password/…, /account, /api/me, …).
  if (event.route.id === null) return flows.fetch(event.request, event);
  // The app's own routes: the signed-in user on `locals`, and 403 for an
  // unsafe cross-site request.
  return identify(event.request, async () => {
    const subject = currentUser(event.request);
    const user = subject === null
      ? null
      : await flows.context.credentials.findById(subject);
    event.locals.user = user && { id: user.id, email: user.email };
    return resolve(event);
  });
};
