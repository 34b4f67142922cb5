/**
 * The reference app's account deletion over HTTP (form and JSON):
 * `POST /account/delete`.
 */
import assert from "node:assert/strict";
import { api, bearer, Browser, registerJson, startApp } from "./_harness.ts";

const PASSWORD = "correct horse battery";

Deno.test("POST /account/delete needs a session and the current password (401), and changes nothing then", async () => {
  await using app = await startApp();
  const { subject, token } = await registerJson(
    app.origin,
    "d@example.com",
    PASSWORD,
  );
  assert.equal(
    (await api(app.origin, "POST", "/account/delete", { password: PASSWORD }))
      .status,
    401,
  );
  const wrong = await api(app.origin, "POST", "/account/delete", {
    password: "nope nope nope",
  }, bearer(token));
  assert.equal(wrong.status, 401);
  assert.equal(wrong.body.error, "invalid_credentials");
  assert.ok(await app.credentials.findById(subject));
});

Deno.test("POST /account/delete (form): revokes every session, deletes the user, notes, tokens and activity, clears the cookie, 303 to /; the address registers again (201)", async () => {
  await using app = await startApp();
  const { subject, token } = await registerJson(
    app.origin,
    "bye@example.com",
    PASSWORD,
  );
  const verifyLink = app.lastLink("bye@example.com");
  // A note to delete (notes need a verified address).
  await app.credentials.markVerified(subject, "bye@example.com", 1);
  const note = await api(
    app.origin,
    "POST",
    "/api/notes",
    { text: "mine" },
    bearer(token),
  );
  assert.equal(note.status, 201);
  const { token: watcher } = await registerJson(
    app.origin,
    "watch@example.com",
    PASSWORD,
  );
  assert.equal(
    (await api(
      app.origin,
      "GET",
      `/api/notes/${note.body.id}`,
      undefined,
      bearer(watcher),
    )).status,
    200,
  );

  const b = new Browser(app.origin);
  await b.post("/login", { email: "bye@example.com", password: PASSWORD });
  const res = await b.post("/account/delete", { password: PASSWORD });
  assert.equal(res.status, 303);
  assert.equal(res.headers.get("location"), "/");
  assert.ok(
    res.headers.getSetCookie().some((c) =>
      c.startsWith("__Host-session=") && /Max-Age=0/.test(c)
    ),
    "clears the cookie",
  );
  assert.equal(b.cookies.has("__Host-session"), false);
  assert.match(
    (await b.page("/")).body,
    /Your account and everything in it are deleted/,
  );
  assert.equal(await app.credentials.findById(subject), null);
  assert.equal(
    (await api(app.origin, "GET", "/api/me", undefined, bearer(token))).status,
    401,
    "other sessions revoked",
  );
  assert.equal(
    (await api(
      app.origin,
      "GET",
      `/api/notes/${note.body.id}`,
      undefined,
      bearer(watcher),
    )).status,
    404,
    "notes deleted",
  );
  const url = new URL(verifyLink);
  const link = await api(app.origin, "POST", "/verify", {
    token: url.searchParams.get("token"),
  });
  assert.equal(link.status, 400, "tokens deleted");
  const again = await api(app.origin, "POST", "/register", {
    email: "bye@example.com",
    password: PASSWORD,
  });
  assert.equal(again.status, 201);
  const activity = await api(
    app.origin,
    "GET",
    "/api/activity",
    undefined,
    bearer(again.body.token),
  );
  assert.deepEqual(
    (activity.body.events as { type: string }[]).map((e) => e.type),
    ["registered"],
    "the old account's activity is gone",
  );
});

Deno.test("POST /account/delete (JSON) answers 204", async () => {
  await using app = await startApp();
  const { subject, token } = await registerJson(
    app.origin,
    "j@example.com",
    PASSWORD,
  );
  const res = await api(app.origin, "POST", "/account/delete", {
    password: PASSWORD,
  }, bearer(token));
  assert.equal(res.status, 204);
  assert.equal(await app.credentials.findById(subject), null);
  assert.equal(
    (await api(app.origin, "GET", "/api/me", undefined, bearer(token))).status,
    401,
  );
});
