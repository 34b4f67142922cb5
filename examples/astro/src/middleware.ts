import { defineMiddleware } from "astro:middleware";
import { currentUser } from "@portcullis/auth";
import { portcullis } from "./lib/auth";

export const onRequest = defineMiddleware(async (context, next) => {
  const { flows, identify } = await portcullis();
  // The flows' catch-all reads the session itself.
  if (context.routePattern === "/[...path]") return next();
  // The app's own pages: the signed-in user on `locals`, and 403 for an
  // unsafe cross-site request.
  return identify(context.request, async () => {
    const subject = currentUser(context.request);
    const user = subject === null
      ? null
      : await flows.context.credentials.findById(subject);
    context.locals.user = user && { id: user.id, email: user.email };
    return next();
  });
});
