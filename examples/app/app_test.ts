/**
 * Tests of the generated app: `deno test -A`. They run the app in-process
 * with this project's modules (`testing.ts`): its configuration and its own
 * module (the notes API) over the flows of `@portcullis/accounts`.
 *
 * @module
 */
import assert from "node:assert/strict";
import { accountsKit, logMailReader } from "@portcullis/accounts/testing";
import { startTestApp } from "./testing.ts";

Deno.test("the security kit of @portcullis/accounts: this app keeps every guarantee over HTTP", async (t) => {
  const app = await startTestApp();
  const server = Deno.serve(
    { hostname: "127.0.0.1", port: 0, onListen: () => {} },
    app.fetch,
  );
  try {
    const report = await accountsKit({
      baseUrl: `http://127.0.0.1:${server.addr.port}`,
      mail: logMailReader(app.mail),
    }, t);
    assert.equal(report.failed, 0);
  } finally {
    await server.shutdown();
    app.close();
  }
});

Deno.test("register, log in, read /api/me, log out", async () => {
  const { call, close } = await startTestApp();
  const created = await call("POST", "/register", {
    email: "a@example.com",
    password: "correct horse battery",
  });
  assert.equal(created.res.status, 201);
  const taken = await call("POST", "/register", {
    email: "A@example.com",
    password: "correct horse battery",
  });
  assert.equal(taken.res.status, 409);
  const bad = await call("POST", "/register", { email: "nope", password: "x" });
  assert.equal(bad.res.status, 422);

  const wrong = await call("POST", "/login", {
    email: "a@example.com",
    password: "wrong password",
  });
  const unknown = await call("POST", "/login", {
    email: "b@example.com",
    password: "wrong password",
  });
  assert.equal(wrong.res.status, 401);
  assert.deepEqual(unknown.json, wrong.json);

  const login = await call("POST", "/login", {
    email: "a@example.com",
    password: "correct horse battery",
  });
  assert.equal(login.res.status, 200);
  assert.equal(login.json.tokenType, "Bearer");
  const token = login.json.token;
  const me = await call("GET", "/api/me", undefined, token);
  assert.equal(me.res.status, 200);
  assert.equal(me.json.email, "a@example.com");
  assert.equal(
    (await call("POST", "/logout", undefined, token)).res.status,
    204,
  );
  assert.equal(
    (await call("GET", "/api/me", undefined, token)).res.status,
    401,
  );
  close();
});

Deno.test("notes: the owner edits, another user may only read", async () => {
  const { call, verifiedUser, close } = await startTestApp();
  const owner = await verifiedUser("o@example.com", "correct horse battery");
  const other = await verifiedUser("p@example.com", "correct horse battery");
  const note = await call("POST", "/api/notes", { text: "hello" }, owner.token);
  assert.equal(note.res.status, 201);
  const path = `/api/notes/${note.json.id}`;
  assert.equal(
    (await call("GET", path, undefined, other.token)).res.status,
    200,
  );
  assert.equal((await call("GET", path)).res.status, 401);
  assert.equal(
    (await call("PUT", path, { text: "x" }, other.token)).res.status,
    403,
  );
  assert.equal(
    (await call("PUT", path, { text: "y" }, owner.token)).res.status,
    200,
  );
  close();
});

Deno.test("a cross-site post is refused", async () => {
  const { call, close } = await startTestApp();
  const res = await call(
    "POST",
    "/login",
    {
      email: "a@example.com",
      password: "correct horse battery",
    },
    undefined,
    { headers: { "sec-fetch-site": "cross-site" } },
  );
  assert.equal(res.res.status, 403);
  close();
});

/** The token of the last link mailed to `to`, waiting for mail sent late. */
async function mailedToken(mail: string[], to: string, count: number) {
  for (let i = 0; i < 200; i++) {
    const lines = mail.filter((l) => l.includes(`to=${to} `));
    if (lines.length >= count) {
      const link = lines.at(-1)!.match(/link=(\S+)/)![1];
      return new URL(link).searchParams.get("token")!;
    }
    await new Promise((r) => setTimeout(r, 10));
  }
  throw new Error(`no mail to ${to}`);
}

Deno.test("the account lifecycle: reset a password, list and end sessions, read the activity, change the email, delete the account", async () => {
  const { call, mail, close } = await startTestApp();
  const password = "correct horse battery";
  const first = await call("POST", "/register", {
    email: "life@example.com",
    password,
  });
  assert.equal(first.res.status, 201);

  // With email verification the registration mailed a link already.
  const sent = mail.filter((l) => l.includes("to=life@example.com ")).length;
  const forgot = await call("POST", "/password/forgot", {
    email: "life@example.com",
  });
  assert.equal(forgot.res.status, 202);
  const reset = await call("POST", "/password/reset", {
    token: await mailedToken(mail, "life@example.com", sent + 1),
    password: "a brand new passphrase",
  });
  assert.equal(reset.res.status, 200);
  assert.equal(
    (await call("GET", "/api/me", undefined, first.json.token)).res.status,
    401,
  );

  const login = async () =>
    (await call("POST", "/login", {
      email: "life@example.com",
      password: "a brand new passphrase",
    })).json.token as string;
  const token = await login();
  const other = await login();
  const sessions = (await call("GET", "/api/sessions", undefined, token)).json
    .sessions as { id: string; current: boolean }[];
  assert.equal(sessions.length, 2);
  const otherId = sessions.find((s) => !s.current)!.id;
  assert.equal(
    (await call("DELETE", `/api/sessions/${otherId}`, undefined, token)).res
      .status,
    204,
  );
  assert.equal(
    (await call("GET", "/api/me", undefined, other)).res.status,
    401,
  );

  const activity = await call("GET", "/api/activity", undefined, token);
  assert.equal(activity.json.events[0].type, "session_revoked");

  const change = await call("POST", "/account/email", {
    password: "a brand new passphrase",
    email: "moved@example.com",
  }, token);
  assert.equal(change.res.status, 202);
  const confirmed = await call("POST", "/account/email/confirm", {
    token: await mailedToken(mail, "moved@example.com", 1),
    password: "a brand new passphrase",
  });
  assert.equal(confirmed.res.status, 200);
  assert.equal(
    (await call("GET", "/api/me", undefined, token)).json.email,
    "moved@example.com",
  );

  const deleted = await call("POST", "/account/delete", {
    password: "a brand new passphrase",
  }, token);
  assert.equal(deleted.res.status, 204);
  assert.equal(
    (await call("GET", "/api/me", undefined, token)).res.status,
    401,
  );
  close();
});
