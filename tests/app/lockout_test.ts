/**
 * Issue 16, finding 7 (a stranger locks the owner out for 30 days): 110
 * guesses from 110 addresses stopped the account, so the owner with the
 * right password got 429 with `retry-after: 2592000`, and even the
 * signed-in password re-check was refused. Now a browser that signed in
 * before carries the device cookie (OWASP "device cookies") and is exempt
 * from the account's lockout, the lockout holds for every other browser,
 * and the signed-in re-check has limits of its own.
 *
 * @module
 */
import assert from "node:assert/strict";
import { api, bearer, Browser, registerJson, startApp } from "./_harness.ts";

const OWNER = "owner@example.com";
const PASSWORD = "correct horse battery";

Deno.test("issue 16 finding 7: after a stranger's 110 guesses from 110 addresses, the owner's browser with the device cookie signs in, every other browser is held, and the signed-in re-check still works", async () => {
  await using app = await startApp();
  const { token: earlierSession } = await registerJson(app.origin, OWNER);

  // The owner signs in once from their browser: it gets the device cookie.
  const browser = new Browser(app.origin);
  const first = await browser.post("/login", {
    email: OWNER,
    password: PASSWORD,
  }, {
    "x-test-client": "198.51.100.10",
  });
  assert.equal(first.status, 303);
  const device = first.headers.getSetCookie().find((c) =>
    c.startsWith("__Host-device=")
  );
  browser.cookies.delete("__Host-session"); // signed out, device kept

  // A stranger: 110 guesses, each from a new address.
  const statuses = new Map<number, number>();
  for (let i = 0; i < 110; i++) {
    const res = await api(app.origin, "POST", "/login", {
      email: OWNER,
      password: `guess ${i}`,
    }, { "x-test-client": `203.0.${i >> 8}.${i & 255}` });
    statuses.set(res.status, (statuses.get(res.status) ?? 0) + 1);
  }
  assert.deepEqual(Object.fromEntries(statuses), { 401: 100, 429: 10 });

  // The owner without the device cookie, right password, new address: the
  // lockout holds.
  const elsewhere = await api(app.origin, "POST", "/login", {
    email: OWNER,
    password: PASSWORD,
  }, { "x-test-client": "192.0.2.50" });
  assert.equal(elsewhere.status, 429);
  assert.equal(elsewhere.headers.get("retry-after"), String(30 * 86400));

  // The owner's own browser, right password, from that same new address.
  const back = await browser.post("/login", {
    email: OWNER,
    password: PASSWORD,
  }, {
    "x-test-client": "192.0.2.50",
  });
  assert.equal(back.status, 303);
  assert.equal(back.headers.get("location"), "/");
  assert.ok(browser.cookies.has("__Host-session"), "signed in");
  const me = await browser.fetch("/api/me", {
    headers: { accept: "application/json" },
  });
  assert.equal(me.status, 200);
  assert.equal((await me.json()).email, OWNER);

  // A wrong password from the owner's browser is an ordinary 401, not 429.
  browser.cookies.delete("__Host-session");
  const typo = await browser.post("/login", {
    email: OWNER,
    password: "typo typo",
  }, {
    "x-test-client": "192.0.2.50",
  });
  assert.equal(typo.status, 401);
  await typo.body?.cancel();

  // Still held for the stranger, even after the owner's successes.
  const stranger = await api(app.origin, "POST", "/login", {
    email: OWNER,
    password: PASSWORD,
  }, { "x-test-client": "203.0.113.99" });
  assert.equal(stranger.status, 429);

  // The signed-in re-check (an email change asks for the password) works
  // on a session from before the flood: the login lockout is not its limit.
  const recheck = await api(app.origin, "POST", "/account/email", {
    password: PASSWORD,
    email: "owner.new@example.com",
  }, bearer(earlierSession));
  assert.equal(recheck.status, 202, JSON.stringify(recheck.body));
  // ...and a wrong one there answers 401, then its own per-session limit.
  const wrong: number[] = [];
  for (let i = 0; i < 6; i++) {
    wrong.push(
      (await api(app.origin, "POST", "/account/email", {
        password: "not it at all",
        email: "owner.new@example.com",
      }, bearer(earlierSession))).status,
    );
  }
  assert.deepEqual(wrong, [401, 401, 401, 401, 429, 429]);

  // The cookie that did it: HttpOnly, Secure, SameSite=Lax, long-lived,
  // and no email in it.
  assert.ok(device);
  for (const attr of ["HttpOnly", "Secure", "SameSite=Lax", "Path=/"]) {
    assert.ok(device.includes(attr), `${attr} in ${device}`);
  }
  const maxAge = Number(device.match(/Max-Age=(\d+)/)?.[1]);
  assert.ok(maxAge >= 90 * 86400, `long-lived: ${maxAge}`);
  assert.doesNotMatch(device, /owner|example\.com/, "no email in the cookie");
});

Deno.test("issue 16 finding 7: a device cookie of another account, or a forged one, does not lift the lockout", async () => {
  await using app = await startApp();
  await registerJson(app.origin, OWNER);
  await registerJson(app.origin, "stranger@example.com");
  const strangerBrowser = new Browser(app.origin);
  const own = await strangerBrowser.post("/login", {
    email: "stranger@example.com",
    password: PASSWORD,
  }, { "x-test-client": "203.0.113.1" });
  assert.equal(own.status, 303);
  assert.ok(strangerBrowser.cookies.has("__Host-device"));
  strangerBrowser.cookies.delete("__Host-session");
  for (let i = 0; i < 100; i++) {
    await api(app.origin, "POST", "/login", {
      email: OWNER,
      password: `guess ${i}`,
    }, { "x-test-client": `198.18.0.${i}` });
  }
  // The stranger's own device cookie is for their account only.
  const borrowed = await strangerBrowser.post("/login", {
    email: OWNER,
    password: PASSWORD,
  }, { "x-test-client": "203.0.113.2" });
  assert.equal(borrowed.status, 429);
  await borrowed.body?.cancel();
  const forged = new Browser(app.origin);
  forged.cookies.set(
    "__Host-device",
    strangerBrowser.cookies.get("__Host-device")!.replace(
      /.$/,
      (c) => c === "A" ? "B" : "A",
    ),
  );
  const res = await forged.post(
    "/login",
    { email: OWNER, password: PASSWORD },
    {
      "x-test-client": "203.0.113.3",
    },
  );
  assert.equal(res.status, 429);
  await res.body?.cancel();
});

/** Posts the login form from a browser; the `__Host-device` cookie it set. */
async function deviceCookieOf(
  app: { origin: string },
  email: string,
  password: string,
): Promise<Browser> {
  const browser = new Browser(app.origin);
  const res = await browser.post("/login", { email, password }, {
    "x-test-client": "198.51.100.77",
  });
  assert.equal(res.status, 303);
  assert.ok(browser.cookies.has("__Host-device"), "a device cookie was set");
  browser.cookies.delete("__Host-session");
  return browser;
}

/** 110 guesses from 110 addresses: the account reaches its hard stop. */
async function flood(app: { origin: string }, email: string): Promise<void> {
  for (let i = 0; i < 110; i++) {
    await api(app.origin, "POST", "/login", {
      email,
      password: `guess ${i}`,
    }, { "x-test-client": `203.0.${i >> 8}.${i & 255}` });
  }
}

Deno.test("red-team review: a device cookie a pre-hijacker collected stops exempting it once the owner resets the password, and one of a deleted account exempts no one", async () => {
  await using app = await startApp();
  // The attacker registers the victim's address and signs in by form.
  const victim = "victim@example.com";
  await registerJson(app.origin, victim, PASSWORD);
  const attacker = await deviceCookieOf(app, victim, PASSWORD);
  // The owner proves the address with a reset.
  await api(app.origin, "POST", "/password/forgot", { email: victim });
  const link = new URL(await app.awaitLink(victim, 2));
  assert.equal(link.pathname, "/password/reset");
  const reset = await api(app.origin, "POST", "/password/reset", {
    token: link.searchParams.get("token"),
    password: "the owner's own passphrase",
  });
  assert.equal(reset.status, 200);
  await flood(app, victim);
  const guess = await attacker.post("/login", {
    email: victim,
    password: "another guess",
  }, { "x-test-client": "198.51.100.77" });
  assert.equal(guess.status, 429, "the old device cookie exempts no more");
  await guess.body?.cancel();

  // Deletion: the deleted account's device cookie exempts no one from the
  // lockout of whoever registers the address next.
  const gone = "gone@example.com";
  const { token } = await registerJson(app.origin, gone, PASSWORD);
  const old = await deviceCookieOf(app, gone, PASSWORD);
  const deleted = await api(app.origin, "POST", "/account/delete", {
    password: PASSWORD,
  }, bearer(token));
  assert.equal(deleted.status, 204);
  await registerJson(app.origin, gone, "a new owner's passphrase");
  await flood(app, gone);
  const tried = await old.post("/login", {
    email: gone,
    password: "a guess",
  }, { "x-test-client": "198.51.100.77" });
  assert.equal(tried.status, 429);
  await tried.body?.cancel();
});

Deno.test("third outside review: the browser that resets the password is trusted, so a stranger who stops the account again right after the reset cannot keep the owner out", async () => {
  await using app = await startApp();
  await registerJson(app.origin, OWNER, PASSWORD);
  await flood(app, OWNER);
  // The owner, on a new browser, is held and follows the 429's advice.
  const phone = new Browser(app.origin);
  const held = await phone.post("/login", {
    email: OWNER,
    password: PASSWORD,
  }, { "x-test-client": "192.0.2.60" });
  assert.equal(held.status, 429);
  await held.body?.cancel();
  await api(app.origin, "POST", "/password/forgot", { email: OWNER });
  const link = new URL(await app.awaitLink(OWNER, 2));
  assert.equal(link.pathname, "/password/reset");
  const NEW = "the owner's new passphrase";
  const reset = await phone.post("/password/reset", {
    token: link.searchParams.get("token") ?? "",
    password: NEW,
  }, { "x-test-client": "192.0.2.60" });
  assert.equal(reset.status, 303);
  await reset.body?.cancel();
  assert.ok(
    phone.cookies.has("__Host-device"),
    "the reset trusts this browser",
  );

  // The stranger sees the account open again and stops it at once.
  await flood(app, OWNER);
  const signIn = await phone.post("/login", {
    email: OWNER,
    password: NEW,
  }, { "x-test-client": "192.0.2.60" });
  assert.equal(signIn.status, 303, "the browser that reset signs in");
  await signIn.body?.cancel();
  const other = await api(app.origin, "POST", "/login", {
    email: OWNER,
    password: NEW,
  }, { "x-test-client": "192.0.2.61" });
  assert.equal(other.status, 429, "any other new browser is still held");

  // A JSON reset carries the cookie too.
  await api(app.origin, "POST", "/password/forgot", { email: OWNER });
  const again = new URL(await app.awaitLink(OWNER, 3));
  const res = await fetch(new URL("/password/reset", app.origin), {
    method: "POST",
    headers: { "content-type": "application/json", accept: "application/json" },
    body: JSON.stringify({
      token: again.searchParams.get("token"),
      password: "a third passphrase, long enough",
    }),
  });
  assert.equal(res.status, 200);
  assert.ok(
    res.headers.getSetCookie().some((c) => c.startsWith("__Host-device=")),
  );
  await res.body?.cancel();
});

Deno.test("fourth outside review: a stranger's 30-day stop on an address nobody has registered yet does not hold its new owner: registration lifts it and trusts the browser that registered", async () => {
  await using app = await startApp();
  const NEWCOMER = "newcomer@example.com";
  await flood(app, NEWCOMER);
  const held = await api(app.origin, "POST", "/login", {
    email: NEWCOMER,
    password: PASSWORD,
  }, { "x-test-client": "192.0.2.70" });
  assert.equal(held.status, 429, "the stop is set before the account exists");

  const browser = new Browser(app.origin);
  const registered = await browser.post("/register", {
    email: NEWCOMER,
    password: PASSWORD,
  }, { "x-test-client": "192.0.2.70" });
  assert.equal(registered.status, 303);
  await registered.body?.cancel();
  assert.ok(browser.cookies.has("__Host-device"), "the browser is trusted");
  browser.cookies.delete("__Host-session");
  const back = await browser.post("/login", {
    email: NEWCOMER,
    password: PASSWORD,
  }, { "x-test-client": "192.0.2.70" });
  assert.equal(back.status, 303, "the browser that registered signs in");
  await back.body?.cancel();
  // The stop was lifted: another browser signs in too.
  const elsewhere = await api(app.origin, "POST", "/login", {
    email: NEWCOMER,
    password: PASSWORD,
  }, { "x-test-client": "192.0.2.71" });
  assert.equal(elsewhere.status, 200);
  // A JSON registration carries the device cookie as well.
  const json = await fetch(new URL("/register", app.origin), {
    method: "POST",
    headers: { "content-type": "application/json", accept: "application/json" },
    body: JSON.stringify({ email: "api@example.com", password: PASSWORD }),
  });
  assert.equal(json.status, 201);
  assert.ok(
    json.headers.getSetCookie().some((c) => c.startsWith("__Host-device=")),
  );
  await json.body?.cancel();
});
