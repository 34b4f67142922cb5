/**
 * The reference app's security properties over HTTP: verification links
 * (reuse, expiry, resend), `next`, enumeration, rate limits, CSRF, IDOR and
 * spoofed identity headers.
 */
import assert from "node:assert/strict";
import {
  api,
  bearer,
  Browser,
  redeemLink,
  registerJson,
  startApp,
} from "./_harness.ts";

Deno.test("verify flow end to end: the link from the mail log verifies once; reuse answers 400 (SECURITY 43)", async () => {
  await using app = await startApp();
  const { token } = await registerJson(app.origin, "v1@example.com");
  const link = app.lastLink("v1@example.com");
  assert.ok(
    link.startsWith(app.origin + "/verify?token="),
    "built from appOrigin",
  );
  assert.equal((await redeemLink(link)).status, 303);
  const me = await api(app.origin, "GET", "/api/me", undefined, bearer(token));
  assert.equal(me.body.verified, true);
  const stampedAt =
    (await app.credentials.findByEmail("v1@example.com"))!.verifiedAt;
  app.advance(5000);
  assert.equal((await redeemLink(link)).status, 400);
  assert.equal(
    (await app.credentials.findByEmail("v1@example.com"))!.verifiedAt,
    stampedAt,
    "nothing changed",
  );
});

Deno.test("two concurrent redemptions of one link: exactly one succeeds", async () => {
  await using app = await startApp();
  await registerJson(app.origin, "v2@example.com");
  const link = app.lastLink("v2@example.com");
  const statuses =
    (await Promise.all([redeemLink(link), redeemLink(link), redeemLink(link)]))
      .map((r) => r.status).sort();
  assert.deepEqual(statuses, [303, 400, 400]);
});

Deno.test("an expired link (24 h, injected clock) answers 400 and verifies nothing", async () => {
  await using app = await startApp();
  await registerJson(app.origin, "v3@example.com");
  const link = app.lastLink("v3@example.com");
  app.advance(24 * 3600 * 1000);
  assert.equal((await redeemLink(link)).status, 400);
  assert.equal(
    (await app.credentials.findByEmail("v3@example.com"))!.verifiedAt,
    0,
  );
});

Deno.test("a link just inside 24 h still works", async () => {
  await using app = await startApp();
  await registerJson(app.origin, "v4@example.com");
  const link = app.lastLink("v4@example.com");
  app.advance(24 * 3600 * 1000 - 1000);
  assert.equal((await redeemLink(link)).status, 303);
});

Deno.test("after a resend the older link answers 400 and the newer one works", async () => {
  await using app = await startApp();
  const b = new Browser(app.origin);
  await b.post("/register", {
    email: "v5@example.com",
    password: "correct horse battery",
  });
  const older = app.lastLink("v5@example.com");
  (await b.post("/verify/resend", {})).body?.cancel();
  const newer = app.lastLink("v5@example.com");
  assert.notEqual(older, newer);
  assert.equal((await redeemLink(older)).status, 400);
  assert.equal(
    (await app.credentials.findByEmail("v5@example.com"))!.verifiedAt,
    0,
  );
  assert.equal(
    (await redeemLink(newer, {}, "correct horse battery")).status,
    303,
  );
});

Deno.test("the verification link does not sign anyone in (SECURITY 44)", async () => {
  await using app = await startApp();
  await registerJson(app.origin, "v6@example.com");
  const res = await redeemLink(app.lastLink("v6@example.com"));
  assert.equal(res.status, 303);
  assert.ok(
    !res.headers.getSetCookie().some((c) => c.startsWith("__Host-session=")),
  );
});

Deno.test("next refuses other origins and odd paths", async () => {
  await using app = await startApp();
  await registerJson(app.origin, "n@example.com");
  for (
    const [next, expected] of [
      ["https://evil.example/", "/"],
      ["//evil.example/x", "/"],
      ["/\\evil.example", "/"],
      ["javascript:alert(1)", "/"],
      ["/account?tab=1", "/account?tab=1"],
    ]
  ) {
    const res = await new Browser(app.origin).post("/login", {
      email: "n@example.com",
      password: "correct horse battery",
      next,
    });
    assert.equal(res.status, 303, next);
    assert.equal(res.headers.get("location"), expected, next);
  }
  const page = await new Browser(app.origin).page(
    "/login?next=https://evil.example/",
  );
  assert.match(page.body, /name="next" value="\/"/);
});

Deno.test("enumeration: unknown email and wrong password answer identical status, headers and body (SECURITY 14); the page echoes only the email as typed", async () => {
  await using app = await startApp();
  await registerJson(app.origin, "known@example.com");
  // Two emails of one length: the page fills in the typed email again, so
  // the bodies may differ in that echo alone.
  const strip = (h: Headers) => [...h].filter(([k]) => k !== "date");
  for (const form of [false, true]) {
    const send = async (email: string) => {
      const res = form
        ? await new Browser(app.origin).post("/login", {
          email,
          password: "wrong password",
        })
        : await fetch(new URL("/login", app.origin), {
          method: "POST",
          headers: {
            "content-type": "application/json",
            accept: "application/json",
          },
          body: JSON.stringify({ email, password: "wrong password" }),
        });
      return {
        status: res.status,
        headers: strip(res.headers),
        body: await res.text(),
      };
    };
    const unknown = await send("other@example.com");
    const wrong = await send("known@example.com");
    assert.equal(unknown.status, 401);
    unknown.body = unknown.body.replaceAll("other@example.com", "EMAIL");
    wrong.body = wrong.body.replaceAll("known@example.com", "EMAIL");
    assert.deepEqual(unknown, wrong);
    if (form) assert.match(wrong.body, /value="EMAIL"/);
  }
});

const THROTTLE_3 = {
  loginPerAccount: {
    freeFailures: 3,
    baseDelaySeconds: 60,
    maxDelaySeconds: 900,
    hardStop: 100,
  },
};

Deno.test("SECURITY item 45 (login throttle): after 3 failures from one address, 429 with Retry-After there even for the right password; the owner elsewhere gets in; the delay passes", async () => {
  await using app = await startApp({ limits: THROTTLE_3 });
  await registerJson(app.origin, "rl@example.com");
  const attempt = (password: string, client = "192.0.2.66") =>
    api(app.origin, "POST", "/login", { email: "rl@example.com", password }, {
      "x-test-client": client,
    });
  for (let i = 0; i < 3; i++) {
    assert.equal((await attempt("wrong password")).status, 401);
  }
  const blocked = await attempt("correct horse battery");
  assert.equal(blocked.status, 429);
  assert.equal(blocked.headers.get("retry-after"), "60");
  // The owner, from an address that has not failed, is not held.
  assert.equal(
    (await attempt("correct horse battery", "203.0.113.9")).status,
    200,
  );
  // The success cleared the account's count; the guessing address still
  // waits out its own delay, then gets in.
  app.advance(60 * 1000);
  assert.equal((await attempt("correct horse battery")).status, 200);
});

Deno.test("SECURITY item 45 (login throttle): the throttled answer is the same 429 for a registered and an unknown email", async () => {
  await using app = await startApp({ limits: THROTTLE_3 });
  await registerJson(app.origin, "known@example.com");
  const answers = [];
  for (const email of ["known@example.com", "unknown@example.com"]) {
    for (let i = 0; i < 3; i++) {
      await api(app.origin, "POST", "/login", {
        email,
        password: "wrong password",
      });
    }
    answers.push(
      await api(app.origin, "POST", "/login", {
        email,
        password: "wrong password",
      }),
    );
  }
  const [known, unknown] = answers;
  assert.equal(known.status, 429);
  assert.equal(unknown.status, 429);
  assert.deepEqual(known.body, unknown.body);
  assert.equal(
    known.headers.get("retry-after"),
    unknown.headers.get("retry-after"),
  );
});

Deno.test("SECURITY item 45 (login throttle): 100 failures on one account from 100 addresses stop even the owner's right password, until the throttle is reset", async () => {
  await using app = await startApp();
  await registerJson(app.origin, "stop@example.com");
  const attempt = (password: string, client: string) =>
    api(app.origin, "POST", "/login", { email: "stop@example.com", password }, {
      "x-test-client": client,
    });
  for (let i = 0; i < 100; i++) {
    assert.equal(
      (await attempt("wrong password", `198.18.0.${i}`)).status,
      401,
      `guess ${i + 1}`,
    );
  }
  assert.equal(
    (await attempt("correct horse battery", "203.0.113.200")).status,
    429,
  );
  app.advance(7 * 86400 * 1000);
  assert.equal(
    (await attempt("correct horse battery", "203.0.113.200")).status,
    429,
    "a week later: still stopped",
  );
  await app.throttle.reset("stop@example.com"); // what a password reset does
  assert.equal(
    (await attempt("correct horse battery", "203.0.113.200")).status,
    200,
  );
});

Deno.test("issue 27 (weak 1, the 30-day stop): the login's hard stop answers 429 whose JSON message and page say that a password reset opens the account now, worded for anyone and the same for a registered and an unknown email; a short delay says only to wait", async () => {
  const limits = {
    loginPerAccount: {
      freeFailures: 2,
      baseDelaySeconds: 60,
      maxDelaySeconds: 60,
      hardStop: 4,
    },
  };
  await using app = await startApp({ limits });
  await registerJson(app.origin, "known@example.com");
  const fail = (email: string, i: number) =>
    api(app.origin, "POST", "/login", { email, password: "wrong password" }, {
      "x-test-client": `198.18.1.${i}`,
    });
  const answers: Record<string, unknown>[] = [];
  const pages: string[] = [];
  for (const email of ["known@example.com", "other@example.com"]) {
    for (let i = 0; i < 2; i++) {
      assert.equal((await fail(email, i)).status, 401);
    }
    // A delay: from an address that failed, wait; no word of a reset.
    const delayed = await fail(email, 0);
    assert.equal(delayed.status, 429);
    assert.equal(delayed.body.message, "Too many attempts, try again later");
    for (let i = 2; i < 4; i++) {
      assert.equal((await fail(email, i)).status, 401);
    }
    // The hard stop, from a fresh address, even with the right password.
    const stopped = await api(app.origin, "POST", "/login", {
      email,
      password: "correct horse battery",
    }, { "x-test-client": "203.0.113.77" });
    assert.equal(stopped.status, 429);
    assert.equal(stopped.body.error, "rate_limited");
    assert.equal(stopped.headers.get("retry-after"), String(30 * 86400));
    answers.push(stopped.body);
    const form = await new Browser(app.origin).post("/login", {
      email,
      password: "correct horse battery",
    }, { "x-test-client": "203.0.113.78" });
    assert.equal(form.status, 429);
    assert.equal(form.headers.get("retry-after"), String(30 * 86400));
    pages.push((await form.text()).replaceAll(email, "EMAIL"));
  }
  const [known, unknown] = answers;
  assert.deepEqual(known, unknown, "one answer for every email");
  const message = String(known.message);
  assert.match(message, /resetting its password opens it again at once/);
  assert.match(message, /If an account uses this address/);
  assert.doesNotMatch(message, /your account/i, "never says it exists");
  // The page: the login form again (the email as typed, every way to sign
  // in, the reset link) with the same words.
  assert.equal(pages[0], pages[1]);
  assert.ok(pages[0].includes(message.replaceAll("'", "&#39;")), pages[0]);
  assert.match(pages[0], /value="EMAIL"/);
  assert.match(pages[0], /href="\/password\/forgot"/);
  // A reset lifts it at once, as the message says.
  await api(app.origin, "POST", "/password/forgot", {
    email: "known@example.com",
  });
  const link = new URL(await app.awaitLink("known@example.com", 2));
  assert.equal(
    (await api(app.origin, "POST", "/password/reset", {
      token: link.searchParams.get("token"),
      password: "a brand new passphrase",
    })).status,
    200,
  );
  assert.equal(
    (await api(app.origin, "POST", "/login", {
      email: "known@example.com",
      password: "a brand new passphrase",
    }, { "x-test-client": "203.0.113.77" })).status,
    200,
  );
});

Deno.test("login is rate limited per client address across emails", async () => {
  await using app = await startApp({
    limits: { loginPerAddress: { max: 4, windowSeconds: 900 } },
  });
  for (let i = 0; i < 4; i++) {
    const res = await api(app.origin, "POST", "/login", {
      email: `u${i}@example.com`,
      password: "wrong password",
    }, { "x-test-client": "192.0.2.7" });
    assert.equal(res.status, 401);
  }
  const blocked = await api(app.origin, "POST", "/login", {
    email: "u9@example.com",
    password: "wrong password",
  }, { "x-test-client": "192.0.2.7" });
  assert.equal(blocked.status, 429);
  assert.ok(blocked.headers.has("retry-after"));
  const elsewhere = await api(app.origin, "POST", "/login", {
    email: "u9@example.com",
    password: "wrong password",
  }, { "x-test-client": "192.0.2.8" });
  assert.equal(elsewhere.status, 401);
});

Deno.test("a successful login resets the email's failure count", async () => {
  await using app = await startApp({
    limits: {
      loginPerAccount: { ...THROTTLE_3.loginPerAccount, freeFailures: 2 },
    },
  });
  await registerJson(app.origin, "reset@example.com");
  const attempt = (password: string) =>
    api(app.origin, "POST", "/login", { email: "reset@example.com", password });
  assert.equal((await attempt("wrong password")).status, 401);
  assert.equal((await attempt("correct horse battery")).status, 200);
  assert.equal((await attempt("wrong password")).status, 401);
  assert.equal((await attempt("correct horse battery")).status, 200);
});

Deno.test("registration and resend are rate limited (429 + Retry-After)", async () => {
  await using app = await startApp({
    limits: {
      registerPerAddress: { max: 2, windowSeconds: 3600 },
      resendPerAccount: { max: 1, windowSeconds: 3600 },
    },
  });
  await registerJson(app.origin, "r1@example.com");
  const b = new Browser(app.origin);
  const second = await b.post("/register", {
    email: "r2@example.com",
    password: "correct horse battery",
  });
  assert.equal(second.status, 303);
  const third = await api(app.origin, "POST", "/register", {
    email: "r3@example.com",
    password: "correct horse battery",
  });
  assert.equal(third.status, 429);
  assert.ok(third.headers.has("retry-after"));
  assert.equal(await app.credentials.findByEmail("r3@example.com"), null);

  assert.equal((await b.post("/verify/resend", {})).status, 303);
  const mails = app.mail.length;
  const throttled = await b.post("/verify/resend", {});
  assert.equal(throttled.status, 429);
  assert.ok(throttled.headers.has("retry-after"));
  await throttled.body?.cancel();
  assert.equal(app.mail.length, mails, "no mail sent while throttled");
});

Deno.test("CSRF: a cross-site form POST is refused with 403 and changes nothing (SECURITY 29, 34)", async () => {
  await using app = await startApp();
  const b = new Browser(app.origin);
  await b.post("/register", {
    email: "csrf@example.com",
    password: "correct horse battery",
  });
  const before = app.mail.length;
  for (
    const headers of <Record<string, string>[]> [
      { "sec-fetch-site": "cross-site" },
      { "sec-fetch-site": "same-site" },
      { "sec-fetch-site": "", origin: "https://evil.example" },
      { origin: "null" },
    ]
  ) {
    const h = new Headers({
      "content-type": "application/x-www-form-urlencoded",
      ...headers,
    });
    if (h.get("sec-fetch-site") === "") h.delete("sec-fetch-site");
    for (
      const path of [
        "/logout",
        "/verify/resend",
        "/login",
        "/register",
        "/account/password",
      ]
    ) {
      const res = await b.fetch(path, {
        method: "POST",
        headers: h,
        body: "email=a%40b.c&password=xxxxxxxxx",
      });
      assert.equal(res.status, 403, `${path} ${JSON.stringify(headers)}`);
      await res.body?.cancel();
    }
  }
  assert.equal(app.mail.length, before);
  assert.equal((await b.page("/account")).status, 200, "still signed in");
  // The same-origin request from the app's own page passes.
  const sameOrigin = await b.fetch("/logout", {
    method: "POST",
    headers: {
      origin: app.origin,
      "content-type": "application/x-www-form-urlencoded",
    },
  });
  assert.equal(sameOrigin.status, 303);
});

Deno.test("IDOR: another user can neither edit a note nor by guessing ids reach one (SECURITY 40)", async () => {
  await using app = await startApp();
  const owner = await registerJson(app.origin, "o@example.com");
  const mallory = await registerJson(app.origin, "mallory@example.com");
  await redeemLink(app.lastLink("o@example.com"));
  await redeemLink(app.lastLink("mallory@example.com"));
  const { body } = await api(app.origin, "POST", "/api/notes", {
    text: "secret plan",
  }, bearer(owner.token));
  const id = body.id as string;
  const put = await api(app.origin, "PUT", `/api/notes/${id}`, {
    text: "mine now",
  }, bearer(mallory.token));
  assert.equal(put.status, 403);
  const note = await api(
    app.origin,
    "GET",
    `/api/notes/${id}`,
    undefined,
    bearer(owner.token),
  );
  assert.equal(note.body.text, "secret plan");
  assert.equal(note.body.owner, owner.subject);
  const missing = await api(
    app.origin,
    "PUT",
    "/api/notes/AAAAAAAAAAAAAAAAAAAAAA",
    { text: "x" },
    bearer(mallory.token),
  );
  assert.equal(missing.status, 404);
});

Deno.test("spoofed x-user-id, x-middleware-subrequest and userId change nothing (SECURITY 39, 41)", async () => {
  await using app = await startApp();
  const victim = await registerJson(app.origin, "victim@example.com");
  await redeemLink(app.lastLink("victim@example.com"));
  const { body } = await api(app.origin, "POST", "/api/notes", {
    text: "victim's",
  }, bearer(victim.token));
  const spoof = {
    "x-user-id": victim.subject,
    "x-middleware-subrequest": "middleware:middleware:middleware",
    "x-forwarded-user": victim.subject,
  };
  assert.equal(
    (await api(app.origin, "GET", "/api/me", undefined, spoof)).status,
    401,
  );
  assert.equal(
    (await api(
      app.origin,
      `GET`,
      `/api/me?userId=${victim.subject}`,
      undefined,
      spoof,
    )).status,
    401,
  );
  assert.equal(
    (await api(app.origin, "PUT", `/api/notes/${body.id}`, {
      text: "x",
      userId: victim.subject,
    }, spoof)).status,
    401,
  );
  assert.equal(
    (await api(app.origin, "POST", "/api/notes", {
      text: "x",
      userId: victim.subject,
      owner: victim.subject,
    }, spoof)).status,
    401,
  );
  const attacker = await registerJson(app.origin, "attacker@example.com");
  const asAttacker = await api(app.origin, "GET", "/api/me", undefined, {
    ...bearer(attacker.token),
    ...spoof,
  });
  assert.equal(asAttacker.body.subject, attacker.subject);
  assert.equal(
    (await api(app.origin, "PUT", `/api/notes/${body.id}`, {
      text: "x",
      userId: victim.subject,
    }, { ...bearer(attacker.token), ...spoof })).status,
    403,
  );
});

Deno.test("a verification token never works as a session, and a session never as a verification token", async () => {
  await using app = await startApp();
  const { token } = await registerJson(app.origin, "p@example.com");
  const verifyToken = new URL(app.lastLink("p@example.com")).searchParams.get(
    "token",
  )!;
  assert.equal(
    (await api(app.origin, "GET", "/api/me", undefined, bearer(verifyToken)))
      .status,
    401,
  );
  assert.equal(
    (await redeemLink(
      `${app.origin}/verify?token=${encodeURIComponent(token)}`,
    ))
      .status,
    400,
  );
});

Deno.test("errors never leak stack traces or tokens; unknown routes answer 404, wrong methods 405", async () => {
  await using app = await startApp();
  assert.equal((await api(app.origin, "GET", "/nope")).status, 404);
  const wrong = await api(app.origin, "DELETE", "/api/me");
  assert.equal(wrong.status, 405);
  assert.equal(wrong.headers.get("allow"), "GET, HEAD");
  const broken = await fetch(new URL("/login", app.origin), {
    method: "POST",
    headers: { "content-type": "application/json", accept: "application/json" },
    body: "{not json",
  });
  assert.equal(broken.status, 400);
  const text = await broken.text();
  assert.doesNotMatch(text, /at .*\.ts|stack|Error:/);
});
