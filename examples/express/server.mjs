// @ts-check
// An Express app with every account flow of @portcullis/accounts mounted
// beside its own routes. Plain JavaScript with JSDoc types: `node server.mjs`.
import express from "express";
import { currentUser, identityMiddleware, requireAuth } from "@portcullis/auth";
import { toNodeListener } from "@portcullis/auth/adapters/node";
import { flows, origin, port, sessions } from "./accounts.mjs";
import { portcullis } from "./portcullis_express.mjs";

const app = express();
app.disable("x-powered-by");

// The app's own pages: identity first (403 for an unsafe cross-site request),
// then the gate (303 to /login for a browser, 401 for an API client).
const identify = portcullis(
  identityMiddleware(sessions, {
    cookie: { secure: origin.startsWith("https:") },
    crossOrigin: { appOrigin: origin },
  }),
  { origin },
);
const signedIn = portcullis(requireAuth(), { origin });
app.get("/dashboard", identify, signedIn, async (req, res) => {
  const user = await flows.context.credentials.findById(
    currentUser(req.portcullis) ?? "",
  );
  const email = String(user?.email ?? "").replace(/[<>&"']/g, "");
  res.type("html").send(
    `<!doctype html><title>Dashboard</title><p>Signed in as ${email}.</p><p><a href="/account">Your account</a></p>`,
  );
});
// A form of your own reads its body with Express's parser, after `identify`.
app.post(
  "/feedback",
  identify,
  signedIn,
  express.urlencoded({ extended: false, limit: "16kb" }),
  (req, res) => {
    res.json({ received: typeof req.body.text === "string" });
  },
);

// Last: every account flow (/login, /register, /verify, /password/…,
// /account, /api/me, …) through the Node adapter, with the socket's address.
app.use(toNodeListener(flows.fetch, { origin }));

app.listen(port, process.env.HOST ?? "127.0.0.1", () => {
  console.log(`Listening on ${origin} (port ${port})`);
});
