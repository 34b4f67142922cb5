/**
 * The reference app's password reset over HTTP (form and JSON):
 * `GET|POST /password/forgot`, `GET|POST /password/reset`.
 */
import assert from "node:assert/strict";
import {
  api,
  bearer,
  Browser,
  FlakyKV,
  registerJson,
  startApp,
} from "./_harness.ts";

const OLD = "correct horse battery";
const NEW = "a brand new passphrase";

function tokenOf(link: string): string {
  return new URL(link).searchParams.get("token") ?? "";
}

Deno.test("GET /password/forgot answers a labelled form; the login page links to it", async () => {
  await using app = await startApp();
  const b = new Browser(app.origin);
  const page = await b.page("/password/forgot");
  assert.equal(page.status, 200);
  assert.match(page.body, /<form method="post" action="\/password\/forgot">/);
  assert.match(page.body, /<label for="email">Email<\/label>/);
  assert.match(
    page.body,
    /id="email" name="email" type="email"\s+autocomplete="username"/,
  );
  assert.match((await b.page("/login")).body, /href="\/password\/forgot"/);
});

Deno.test("SECURITY item 14: POST /password/forgot answers byte for byte the same whether or not the address is registered (form 303, JSON 202)", async () => {
  await using app = await startApp();
  await registerJson(app.origin, "known@example.com", OLD);
  const answers = [];
  for (const email of ["known@example.com", "unknown@example.com"]) {
    const b = new Browser(app.origin);
    const res = await b.post("/password/forgot", { email });
    const body = await res.text();
    const cookie = res.headers.getSetCookie().map((c) =>
      c.replace(/=[^;]*/, "=…")
    );
    answers.push({
      status: res.status,
      location: res.headers.get("location"),
      body,
      cookie,
    });
    const flash = await b.page("/login");
    assert.match(flash.body, /If an account uses that address/);
  }
  assert.deepEqual(answers[0], answers[1]);
  assert.equal(answers[0].status, 303);
  assert.equal(answers[0].location, "/login");
  for (const email of ["known@example.com", "unknown@example.com"]) {
    const json = await api(app.origin, "POST", "/password/forgot", { email });
    assert.equal(json.status, 202);
    assert.deepEqual(json.body, {});
  }
  // The verification mail, then one reset mail per request.
  const link = await app.awaitLink("known@example.com", 3);
  assert.match(link, /\/password\/reset\?token=[A-Za-z0-9_-]{43}$/);
  await new Promise((r) => setTimeout(r, 50));
  assert.equal(
    app.mail.filter((l) => l.includes("unknown@example.com")).length,
    0,
    "no mail for an unregistered address",
  );
});

Deno.test("SECURITY item 44: the reset mail goes to the stored address, its link uses the configured origin (never Host), and a fullwidth ＠ is normalised first", async () => {
  await using app = await startApp();
  await registerJson(app.origin, "nfkc@example.com", OLD);
  const res = await fetch(new URL("/password/forgot", app.origin), {
    method: "POST",
    headers: {
      "content-type": "application/json",
      host: "evil.example",
    },
    body: JSON.stringify({ email: "  NFKC＠Example.com " }),
  });
  assert.equal(res.status, 202);
  await res.body?.cancel();
  const link = await app.awaitLink("nfkc@example.com", 2);
  assert.equal(new URL(link).origin, app.origin);
  const bad = await api(app.origin, "POST", "/password/forgot", {
    email: "a@b@example.com",
  });
  assert.equal(bad.status, 422);
});

Deno.test("SECURITY item 46: asking for reset links is limited per address asked for and per client address (429 with Retry-After)", async () => {
  await using app = await startApp({
    limits: {
      resetPerEmail: { max: 2, windowSeconds: 3600 },
      resetPerAddress: { max: 4, windowSeconds: 900 },
    },
  });
  const ask = (email: string, client = "203.0.113.5") =>
    api(app.origin, "POST", "/password/forgot", { email }, {
      "x-test-client": client,
    });
  assert.equal((await ask("x@example.com")).status, 202);
  assert.equal((await ask("X@Example.com")).status, 202);
  const limited = await ask("x@example.com", "203.0.113.6");
  assert.equal(limited.status, 429, "per address asked for, whoever asks");
  assert.ok(Number(limited.headers.get("retry-after")) > 0);
  assert.equal((await ask("y@example.com")).status, 202);
  assert.equal((await ask("z@example.com")).status, 202);
  assert.equal((await ask("w@example.com")).status, 429, "per client address");
});

Deno.test("GET /password/reset never consumes the token and sends strict-origin; a bad token gets the 400 page", async () => {
  await using app = await startApp();
  await registerJson(app.origin, "r@example.com", OLD);
  await api(app.origin, "POST", "/password/forgot", { email: "r@example.com" });
  const link = await app.awaitLink("r@example.com", 2);
  for (let i = 0; i < 3; i++) {
    const res = await fetch(link, { redirect: "manual" });
    const body = await res.text();
    assert.equal(res.status, 200);
    assert.equal(res.headers.get("referrer-policy"), "strict-origin");
    assert.deepEqual(res.headers.getSetCookie(), [], "never signs anyone in");
    assert.ok(body.includes(`name="token" value="${tokenOf(link)}"`));
    assert.match(body, /autocomplete="new-password"/);
    assert.match(body, /autocomplete="username"/);
  }
  for (const bad of ["", "?token=nope", `?token=${"A".repeat(43)}`]) {
    const res = await fetch(new URL(`/password/reset${bad}`, app.origin));
    assert.equal(res.status, 400, bad);
    assert.match(await res.text(), /does not work/);
  }
  const done = await api(app.origin, "POST", "/password/reset", {
    token: tokenOf(link),
    password: NEW,
  });
  assert.equal(done.status, 200, "the GETs left the token usable");
});

Deno.test("SECURITY item 17: POST /password/reset (form) sets the password, revokes every session, answers 303 to /login; a refused password answers 422 and keeps the token", async () => {
  await using app = await startApp();
  const { token: bearerToken } = await registerJson(
    app.origin,
    "f@example.com",
    OLD,
  );
  const browser = new Browser(app.origin);
  await browser.post("/login", { email: "f@example.com", password: OLD });
  assert.equal((await browser.page("/account")).status, 200);

  const asker = new Browser(app.origin);
  await asker.post("/password/forgot", { email: "f@example.com" });
  const token = tokenOf(await app.awaitLink("f@example.com", 2));

  const weak = await asker.post("/password/reset", {
    token,
    password: "short",
  });
  assert.equal(weak.status, 422);
  const weakBody = await weak.text();
  assert.match(weakBody, /aria-invalid="true"/);
  assert.match(weakBody, /id="password-error"/);
  const common = await asker.post("/password/reset", {
    token,
    password: "1qaz2wsx3edc4rfv",
  });
  assert.equal(common.status, 422);
  assert.match(await common.text(), /too common/);
  assert.equal(
    (await api(app.origin, "GET", "/api/me", undefined, bearer(bearerToken)))
      .status,
    200,
    "a refused password changes nothing",
  );

  const res = await asker.post("/password/reset", { token, password: NEW });
  assert.equal(res.status, 303);
  assert.equal(res.headers.get("location"), "/login");
  assert.equal(res.headers.get("referrer-policy"), "strict-origin");
  assert.ok(
    !res.headers.getSetCookie().some((c) => c.startsWith("__Host-session=")),
    "a reset signs nobody in",
  );
  assert.match((await asker.page("/login")).body, /Your password is changed/);
  assert.equal(
    (await api(app.origin, "GET", "/api/me", undefined, bearer(bearerToken)))
      .status,
    401,
    "the bearer session is revoked",
  );
  assert.equal(
    (await browser.fetch("/api/me", {
      headers: { accept: "application/json" },
    })).status,
    401,
  );
  const oldLogin = await api(app.origin, "POST", "/login", {
    email: "f@example.com",
    password: OLD,
  });
  assert.equal(oldLogin.status, 401);
  const newLogin = await api(app.origin, "POST", "/login", {
    email: "f@example.com",
    password: NEW,
  });
  assert.equal(newLogin.status, 200);
  const again = await asker.post("/password/reset", {
    token,
    password: "yet another passphrase",
  });
  assert.equal(again.status, 400, "used");
  await again.body?.cancel();
});

Deno.test("POST /password/reset (JSON) answers 200 {}; unknown, used and expired (1 hour) tokens answer 400", async () => {
  await using app = await startApp();
  await registerJson(app.origin, "j@example.com", OLD);
  await api(app.origin, "POST", "/password/forgot", { email: "j@example.com" });
  let token = tokenOf(await app.awaitLink("j@example.com", 2));
  const ok = await api(app.origin, "POST", "/password/reset", {
    token,
    password: NEW,
  });
  assert.equal(ok.status, 200);
  assert.deepEqual(ok.body, {});
  const used = await api(app.origin, "POST", "/password/reset", {
    token,
    password: NEW,
  });
  assert.equal(used.status, 400);
  assert.equal(used.body.error, "invalid_link");
  assert.equal(
    (await api(app.origin, "POST", "/password/reset", {
      token: "nope",
      password: NEW,
    })).status,
    400,
  );
  await api(app.origin, "POST", "/password/forgot", { email: "j@example.com" });
  token = tokenOf(await app.awaitLink("j@example.com", 3));
  app.advance(60 * 60 * 1000);
  const expired = await api(app.origin, "POST", "/password/reset", {
    token,
    password: "third passphrase!",
  });
  assert.equal(expired.status, 400, "expired at exactly 1 hour");
  assert.equal(
    (await api(app.origin, "POST", "/login", {
      email: "j@example.com",
      password: NEW,
    })).status,
    200,
  );
});

Deno.test("SECURITY item 43: of concurrent resets with one token exactly one succeeds", async () => {
  await using app = await startApp();
  await registerJson(app.origin, "c@example.com", OLD);
  await api(app.origin, "POST", "/password/forgot", { email: "c@example.com" });
  const token = tokenOf(await app.awaitLink("c@example.com", 2));
  const results = await Promise.all(
    Array.from(
      { length: 8 },
      (_, i) =>
        api(app.origin, "POST", "/password/reset", {
          token,
          password: `racing passphrase ${i}`,
        }),
    ),
  );
  assert.equal(results.filter((r) => r.status === 200).length, 1);
  assert.equal(results.filter((r) => r.status === 400).length, 7);
});

Deno.test("SECURITY item 45: past the account's hard stop even the right password is refused, and a password reset lifts it", async () => {
  await using app = await startApp({
    limits: {
      loginPerAccount: {
        freeFailures: 10,
        baseDelaySeconds: 1,
        maxDelaySeconds: 60,
        hardStop: 3,
      },
    },
  });
  await registerJson(app.origin, "t@example.com", OLD);
  for (let i = 0; i < 3; i++) {
    const r = await api(app.origin, "POST", "/login", {
      email: "t@example.com",
      password: "wrong guess!",
    }, { "x-test-client": `198.51.100.${10 + i}` });
    assert.equal(r.status, 401);
  }
  const locked = await api(app.origin, "POST", "/login", {
    email: "t@example.com",
    password: OLD,
  });
  assert.equal(locked.status, 429, "the hard stop holds the owner too");
  app.advance(3600 * 1000);
  assert.equal(
    (await api(app.origin, "POST", "/login", {
      email: "t@example.com",
      password: OLD,
    })).status,
    429,
    "time alone does not lift it",
  );
  await api(app.origin, "POST", "/password/forgot", { email: "t@example.com" });
  const token = tokenOf(await app.awaitLink("t@example.com", 2));
  assert.equal(
    (await api(app.origin, "POST", "/password/reset", {
      token,
      password: NEW,
    })).status,
    200,
  );
  assert.equal(
    (await api(app.origin, "POST", "/login", {
      email: "t@example.com",
      password: NEW,
    })).status,
    200,
  );
});

Deno.test("a reset revokes before it writes: with the session store failing, the answer is 503, the password is unchanged and the link still works", async () => {
  let flaky: FlakyKV | undefined;
  await using app = await startApp({}, {
    sessionKv: (kv) => (flaky = new FlakyKV(kv)),
  });
  await registerJson(app.origin, "w@example.com", OLD);
  await api(app.origin, "POST", "/password/forgot", { email: "w@example.com" });
  const token = tokenOf(await app.awaitLink("w@example.com", 2));
  flaky!.down = "writes";
  const failed = await api(app.origin, "POST", "/password/reset", {
    token,
    password: NEW,
  });
  assert.equal(failed.status, 503);
  flaky!.down = false;
  assert.equal(
    (await api(app.origin, "POST", "/login", {
      email: "w@example.com",
      password: OLD,
    })).status,
    200,
    "old password still set",
  );
  assert.equal(
    (await api(app.origin, "POST", "/password/reset", { token, password: NEW }))
      .status,
    200,
    "the link still works",
  );
  assert.equal(
    (await api(app.origin, "POST", "/login", {
      email: "w@example.com",
      password: NEW,
    })).status,
    200,
  );
});
