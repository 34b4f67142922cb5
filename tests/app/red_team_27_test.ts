/**
 * Issue 27 (an outside attacker on 608544a), over HTTP against the
 * reference app: finding 4 (a copied ordinary cookie outlived its lifetime
 * through "sign out everywhere else", and could be bound to a thief's DBSC
 * key) and docs item 4 (JSON answers carried a registration offer). Finding
 * 3 is in activity_flood_test.ts.
 *
 * @module
 */
import assert from "node:assert/strict";
import { api, Browser, registerJson, startApp } from "./_harness.ts";

const OWNER = "owner@example.com";
const PASSWORD = "correct horse battery";
const DAY = 24 * 3600 * 1000;

Deno.test("issue 27 finding 4: 'sign out everywhere else' with a copied cookie, repeated, never keeps it past the first session's end", async () => {
  await using app = await startApp();
  await registerJson(app.origin, OWNER);
  const owner = new Browser(app.origin);
  const login = await owner.post("/login", {
    email: OWNER,
    password: PASSWORD,
  });
  assert.equal(login.status, 303);
  await login.body?.cancel();
  const end = app.now() + 7 * DAY;
  // The thief holds a copy and re-mints it every two days.
  const thief = new Browser(app.origin);
  thief.cookies.set("__Host-session", owner.cookies.get("__Host-session")!);
  for (let i = 0; i < 3; i++) {
    app.advance(2 * DAY);
    const res = await thief.post("/account/sessions/revoke-others", {});
    assert.equal(res.status, 303);
    assert.equal(res.headers.get("secure-session-registration"), null);
    await res.body?.cancel();
  }
  app.advance(end - app.now() + 1000);
  const me = await thief.fetch("/api/me", {
    headers: { accept: "application/json" },
  });
  assert.equal(me.status, 401, "the copy ends when the first session does");
  await me.body?.cancel();
});

Deno.test("issue 27 finding 4 and docs item 4: only a browser's fresh sign-in is offered device binding; pages, re-mints and JSON answers are not", async () => {
  await using app = await startApp();
  await registerJson(app.origin, OWNER);
  const owner = new Browser(app.origin);
  const login = await owner.post("/login", {
    email: OWNER,
    password: PASSWORD,
  });
  assert.equal(login.status, 303);
  await login.body?.cancel();
  assert.match(
    login.headers.get("secure-session-registration") ?? "",
    /;path="\/auth\/dbsc\/start";challenge="/,
  );
  // A thief with the copied cookie loads pages: no offer.
  const thief = new Browser(app.origin);
  thief.cookies.set("__Host-session", owner.cookies.get("__Host-session")!);
  for (const path of ["/", "/account"]) {
    const page = await thief.fetch(path, {
      headers: { "sec-fetch-dest": "document", "sec-fetch-mode": "navigate" },
    });
    assert.equal(page.status, 200, path);
    assert.equal(page.headers.get("secure-session-registration"), null, path);
    await page.body?.cancel();
  }
  // A JSON sign-in takes its token from the body: no offer.
  const json = await api(app.origin, "POST", "/login", {
    email: OWNER,
    password: PASSWORD,
  });
  assert.equal(json.status, 200);
  assert.equal(json.headers.get("secure-session-registration"), null);
});

Deno.test("third outside review: a JSON request whose body is not a JSON object gets a JSON 400 on every route that redeems a link, not the link's HTML page", async () => {
  await using app = await startApp({}, {
    signInEnv: { MAGIC_LINK: "on", PASSKEYS: "on" },
  });
  const paths = [
    "/verify",
    "/magic-link/callback",
    "/passkeys/recover/callback",
    "/account/email/confirm",
  ];
  for (const path of paths) {
    for (const body of ["{bad", "[]", "null", '"x"']) {
      const res = await fetch(new URL(path, app.origin), {
        method: "POST",
        headers: {
          "content-type": "application/json",
          accept: "application/json",
        },
        body,
      });
      assert.equal(res.status, 400, `${path} ${body}`);
      assert.match(
        res.headers.get("content-type") ?? "",
        /^application\/json/,
        `${path} ${body}`,
      );
      assert.deepEqual(await res.json(), {
        error: "bad_request",
        message: "Unreadable request body",
      });
    }
  }
});
