// The example app: Elysia on Bun, portcullis through src/auth.ts.
import {
  authorize,
  requireAuthenticated,
  safeNextPath,
} from "@portcullis/auth";
import { escapeHtml } from "@portcullis/auth/http";
import { Elysia, t } from "elysia";
import { credentials, notePolicy, notes, passwords } from "./app.ts";
import { auth, endSession, serve, startSession } from "./auth.ts";

const Credentials = t.Object({ email: t.String(), password: t.String() });

function page(title: string, body: string, status = 200): Response {
  return new Response(
    `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>${title}</title></head><body><h1>${title}</h1>${body}</body></html>`,
    { status, headers: { "content-type": "text/html; charset=utf-8" } },
  );
}

function form(action: string, message = "", email = ""): string {
  return `${message ? `<p role="alert">${escapeHtml(message)}</p>` : ""}
<form method="post" action="${action}">
  <label>Email <input name="email" type="email" value="${
    escapeHtml(email)
  }" required></label>
  <label>Password <input name="password" type="password" required></label>
  <button>Send</button>
</form>`;
}

async function emailOf(subject: string | null): Promise<string | null> {
  return subject ? (await credentials.findById(subject))?.email ?? null : null;
}

const redirect = (location: string) =>
  new Response(null, { status: 303, headers: { location } });

export const app = new Elysia()
  .use(auth)
  .get("/", async ({ user }) => {
    const email = await emailOf(user);
    return page(
      "portcullis + Elysia",
      email
        ? `<p>Signed in as <strong>${
          escapeHtml(email)
        }</strong>. <a href="/account">Your account</a></p><form method="post" action="/logout"><button>Log out</button></form>`
        : `<p><a href="/login">Log in</a> or <a href="/register">register</a>.</p>`,
    );
  })
  .get("/login", () => page("Log in", form("")))
  .post("/login", async ({ body, request, query }) => {
    const login = await passwords.login(body.email, body.password);
    // signIn answers null when the password changed meanwhile: a wrong password.
    const session = login.kind === "ok"
      ? await startSession(request, login)
      : null;
    if (session === null) {
      const status = login.kind === "throttled" ? 429 : 401;
      return page(
        "Log in",
        form("", "Wrong email or password", body.email),
        status,
      );
    }
    return redirect(safeNextPath(query.next ?? "/"));
  }, { body: Credentials })
  .get("/register", () => page("Register", form("/register")))
  .post("/register", async ({ body, request }) => {
    const result = await passwords.register(body.email, body.password);
    if (result.kind === "created") {
      await startSession(request, result.subject);
      return redirect("/");
    }
    const taken = result.kind === "emailTaken";
    const message = taken
      ? "This email is already registered"
      : `Not accepted: ${result.reason}`;
    return page(
      "Register",
      form("/register", message, body.email),
      taken ? 409 : 422,
    );
  }, { body: Credentials })
  .post("/logout", async ({ request }) => {
    await endSession(request);
    return redirect("/login");
  })
  .get("/account", async ({ user }) => {
    const email = await emailOf(user);
    return page(
      "Your account",
      `<p>Signed in as ${escapeHtml(email ?? "")} (subject <code>${
        escapeHtml(user!)
      }</code>).</p>`,
    );
  }, { signedIn: true })
  .post("/api/register", async ({ body, request, status }) => {
    const result = await passwords.register(body.email, body.password);
    if (result.kind === "emailTaken") {
      return status(409, {
        error: "email_taken",
        message: "This email is already registered",
      });
    }
    if (result.kind === "rejected") {
      return status(422, { error: "rejected", reason: result.reason });
    }
    const session = await startSession(request, result.subject);
    return status(201, {
      subject: result.subject,
      token: session!.token,
      expiresAt: session!.expiresAt,
    });
  }, { body: Credentials })
  .post("/api/login", async ({ body, request, status }) => {
    const login = await passwords.login(body.email, body.password);
    const session = login.kind === "ok"
      ? await startSession(request, login)
      : null;
    if (session === null) {
      return status(401, {
        error: "invalid_credentials",
        message: "Wrong email or password",
      });
    }
    return { token: session.token, expiresAt: session.expiresAt };
  }, { body: Credentials })
  .post("/api/logout", async ({ request }) => {
    const denied = requireAuthenticated(request);
    if (denied) return denied;
    await endSession(request);
    return new Response(null, { status: 204 });
  })
  .get("/api/me", async ({ request, user }) => {
    const denied = requireAuthenticated(request); // 401, or 503 if the store is down
    if (denied) return denied;
    return { subject: user, email: await emailOf(user) };
  })
  .post("/api/notes", ({ body, request, user, status }) => {
    const denied = requireAuthenticated(request);
    if (denied) return denied;
    const id = crypto.randomUUID();
    notes.set(id, { owner: user!, text: body.text });
    return status(201, { id });
  }, { body: t.Object({ text: t.String() }) })
  .put("/api/notes/:id", async ({ body, request, params }) => {
    const denied = requireAuthenticated(request) ??
      await authorize(request, notePolicy, "edit", params.id); // 403 for a non-owner
    if (denied) return denied;
    notes.get(params.id)!.text = body.text;
    return { id: params.id, text: body.text };
  }, { body: t.Object({ text: t.String() }) });

const server = Bun.serve({
  hostname: process.env.HOST ?? "localhost",
  port: Number(process.env.PORT ?? 3000),
  fetch: serve(app),
});
console.log(`Listening on ${server.url} (PORT and HOST change it)`);
