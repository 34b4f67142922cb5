// @ts-check
// An Express app guarded by portcullis: JSON and HTML forms, sessions by
// cookie or Bearer, a note policy. Plain JavaScript with JSDoc types, so
// Node runs it as is (`node server.mjs`): no build step.
import express from "express";
import {
  authorize,
  currentUser,
  definePolicy,
  errorResponse,
  identityMiddleware,
  KVSessionStore,
  MemoryCredentialStore,
  MemoryKV,
  PasswordAuthenticator,
  requireAuth,
  SecretProvider,
  SessionManager,
  signIn,
  signOut,
} from "@portcullis/auth";
import { LoginThrottle } from "@portcullis/auth/throttle";
import { portcullis, send } from "./portcullis_express.mjs";

const port = Number(process.env.PORT ?? 3000);
const host = process.env.HOST ?? "127.0.0.1";
const origin = process.env.APP_ORIGIN ?? `http://localhost:${port}`;

// In memory: one process. For more, use @portcullis/sql for users and
// @portcullis/redis or @portcullis/libsql-kv for the revocation list.
const kv = new MemoryKV();
const sessions = new SessionManager({
  secret: SecretProvider.fromEnv("AUTH_SECRET"),
  store: new KVSessionStore(kv),
});
const credentials = new MemoryCredentialStore();
const passwords = new PasswordAuthenticator({
  credentials,
  throttle: new LoginThrottle({ store: kv }),
  revokeSessions: (subject) => sessions.revokeAll(subject),
});

/** @type {Map<string, { id: string, owner: string, text: string }>} */
const notes = new Map();
const notePolicy = definePolicy(
  /** @type {import("@portcullis/auth").Policy<"read">} */ ({
    can: (who, _action, id) => who !== null && notes.get(id)?.owner === who.id,
  }),
);

const app = express();
app.disable("x-powered-by");
// First: identity on every request, and 403 for an unsafe cross-site one
// (before any body is read).
app.use(portcullis(identityMiddleware(sessions, { crossOrigin: { appOrigin: origin } }), { origin }));
app.use(express.json({ limit: "16kb" }));
app.use(express.urlencoded({ extended: false, limit: "16kb" }));
const signedIn = portcullis(requireAuth(), { origin });

/** @param {import("express").Request} req */
const isForm = (req) => typeof req.is("application/x-www-form-urlencoded") === "string";

/**
 * The email and password in the body, or `null`.
 *
 * @param {import("express").Request} req
 */
function credentialsOf(req) {
  const { email, password } = req.body ?? {};
  return typeof email === "string" && typeof password === "string" ? { email, password } : null;
}

/**
 * Answers a new session: 303 for a form, else JSON, with the cookie.
 *
 * @param {import("express").Request} req
 * @param {import("express").Response} res
 * @param {import("@portcullis/auth/http").SignInResult} session
 * @param {string} subject
 * @param {number} status
 */
function answer(req, res, session, subject, status) {
  if (session.setCookie) res.append("set-cookie", session.setCookie);
  if (isForm(req)) return res.redirect(303, "/dashboard");
  res.status(status).json({ subject, token: session.token, expiresAt: session.expiresAt });
}

app.post("/api/register", async (req, res) => {
  const request = /** @type {Request} */ (req.portcullis);
  const input = credentialsOf(req);
  if (input === null) return send(res, errorResponse(request, 400, "invalid_input", "Send an email and a password"));
  const result = await passwords.register(input.email, input.password);
  if (result.kind === "emailTaken") return send(res, errorResponse(request, 409, "email_taken", "Email taken"));
  if (result.kind === "rejected") return send(res, errorResponse(request, 400, "invalid_input", result.reason));
  answer(req, res, await signIn(request, result.subject), result.subject, 201);
});

app.post("/api/login", async (req, res) => {
  const request = /** @type {Request} */ (req.portcullis);
  const input = credentialsOf(req);
  if (input === null) return send(res, errorResponse(request, 400, "invalid_input", "Send an email and a password"));
  const login = await passwords.login(input.email, input.password, { address: req.socket.remoteAddress ?? "unknown" });
  if (login.kind === "throttled") {
    return send(res, errorResponse(request, 429, "too_many_requests", "Try later", {
      "retry-after": String(login.retryAfterSeconds),
    }));
  }
  // signIn answers null when the password changed meanwhile.
  const session = login.kind === "ok" ? await signIn(request, login) : null;
  if (login.kind !== "ok" || session === null) {
    if (isForm(req)) return res.redirect(303, "/login?error=1");
    return send(res, errorResponse(request, 401, "invalid_credentials", "Wrong email or password"));
  }
  answer(req, res, session, login.subject, 200);
});

app.post("/api/logout", signedIn, async (req, res) => {
  const { clearCookie } = await signOut(/** @type {Request} */ (req.portcullis));
  if (clearCookie) res.append("set-cookie", clearCookie);
  if (isForm(req)) return res.redirect(303, "/login");
  res.status(204).end();
});

app.get("/api/me", signedIn, async (req, res) => {
  const subject = /** @type {string} */ (currentUser(/** @type {Request} */ (req.portcullis)));
  const user = await credentials.findById(subject);
  res.json({ subject, email: user?.email ?? null });
});

app.get("/api/notes", signedIn, (req, res) => {
  const me = currentUser(/** @type {Request} */ (req.portcullis));
  res.json([...notes.values()].filter((n) => n.owner === me));
});

app.post("/api/notes", signedIn, (req, res) => {
  const text = req.body?.text;
  if (typeof text !== "string" || text.length > 1000) {
    return send(res, errorResponse(/** @type {Request} */ (req.portcullis), 400, "invalid_input", "Send a text of at most 1000 characters"));
  }
  const note = { id: crypto.randomUUID(), owner: /** @type {string} */ (currentUser(/** @type {Request} */ (req.portcullis))), text };
  notes.set(note.id, note);
  res.status(201).json(note);
});

// Only the owner may read a note: anyone else gets 403.
app.get("/api/notes/:id", signedIn, async (req, res) => {
  const denied = await authorize(/** @type {Request} */ (req.portcullis), notePolicy, "read", req.params.id);
  if (denied) return send(res, denied);
  res.json(notes.get(req.params.id));
});

const page = (/** @type {string} */ body) =>
  `<!doctype html><html lang="en"><meta charset="utf-8"><title>portcullis on Express</title><body>${body}</body></html>`;
const escape = (/** @type {string} */ s) =>
  s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

app.get("/login", (_req, res) => {
  const form = (/** @type {string} */ action, /** @type {string} */ label) =>
    `<form method="post" action="${action}"><input name="email" type="email" required><input name="password" type="password" required><button>${label}</button></form>`;
  res.type("html").send(page(`<h1>Sign in</h1>${form("/api/login", "Sign in")}<h2>Register</h2>${form("/api/register", "Register")}`));
});

app.get("/dashboard", signedIn, (req, res) => {
  const me = currentUser(/** @type {Request} */ (req.portcullis));
  const mine = [...notes.values()].filter((n) => n.owner === me);
  res.type("html").send(page(`<h1>Your notes</h1><ul>${mine.map((n) => `<li>${escape(n.text)}</li>`).join("")}</ul><form method="post" action="/api/logout"><button>Sign out</button></form>`));
});

// Malformed JSON and other errors: a short answer, never a stack trace.
app.use(
  /** @type {import("express").ErrorRequestHandler} */
  (error, req, res, _next) => {
    const request = req.portcullis ?? new Request(origin);
    if (error?.type === "entity.parse.failed" || error?.type === "entity.too.large") {
      return send(res, errorResponse(request, error.status ?? 400, "invalid_input", "The body could not be read"));
    }
    console.error(`${req.method} ${req.path} failed`);
    send(res, errorResponse(request, 500, "internal", "Something went wrong"));
  },
);

app.listen(port, host, () => {
  console.log(`Listening on http://${host}:${port} (set PORT to change it)`);
});
