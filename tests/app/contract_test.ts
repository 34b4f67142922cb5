/**
 * The reference app against every row of docs/http_contract.md, over HTTP,
 * with a libSQL file, Deno KV and an injected clock.
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

Deno.test("GET / shows links when anonymous and the email when signed in", async () => {
  await using app = await startApp();
  const b = new Browser(app.origin);
  let page = await b.page("/");
  assert.equal(page.status, 200);
  assert.match(page.res.headers.get("content-type")!, /^text\/html/);
  assert.match(page.body, /href="\/login"/);
  assert.match(page.body, /href="\/register"/);
  await b.post("/register", {
    email: "Ann@Example.com",
    password: "correct horse battery",
  });
  page = await b.page("/");
  assert.equal(page.status, 200);
  assert.match(page.body, /ann@example\.com/);
});

Deno.test("GET /register and GET /login answer 200 HTML forms", async () => {
  await using app = await startApp();
  const b = new Browser(app.origin);
  for (const path of ["/register", "/login"]) {
    const page = await b.page(path);
    assert.equal(page.status, 200);
    assert.match(
      page.body,
      new RegExp(`<form method="post" action="${path}">`),
    );
    assert.match(page.body, /name="email"/);
    assert.match(page.body, /name="password"/);
  }
});

Deno.test("POST /register (form) answers 303 to / with the session cookie and mails the link", async () => {
  await using app = await startApp();
  const b = new Browser(app.origin);
  const res = await b.post("/register", {
    email: "a@example.com",
    password: "correct horse battery",
  });
  assert.equal(res.status, 303);
  assert.equal(res.headers.get("location"), "/");
  const cookies = res.headers.getSetCookie();
  const session = cookies.find((c) => c.startsWith("__Host-session="));
  assert.ok(session, "session cookie");
  assert.match(
    session!,
    /; Path=\/; Secure; HttpOnly; SameSite=Lax; Max-Age=\d+$/,
  );
  assert.ok(cookies.some((c) => c.startsWith("__Host-flash=")));
  assert.match(
    app.lastLink("a@example.com"),
    new RegExp(`^${app.origin}/verify\\?token=[A-Za-z0-9_-]{43}$`),
  );
  const home = await b.page("/");
  assert.match(home.body, /Check your inbox/);
  // The flash is shown once.
  assert.doesNotMatch((await b.page("/")).body, /Check your inbox/);
});

Deno.test("POST /register (JSON) answers 201 {subject, token}; 409 for a taken email; 422 for invalid input", async () => {
  await using app = await startApp();
  const created = await api(app.origin, "POST", "/register", {
    email: "b@example.com",
    password: "correct horse battery",
  });
  assert.equal(created.status, 201);
  assert.equal(typeof created.body.subject, "string");
  assert.equal(typeof created.body.token, "string");
  const me = await api(
    app.origin,
    "GET",
    "/api/me",
    undefined,
    bearer(created.body.token),
  );
  assert.equal(me.status, 200);
  assert.equal(me.body.subject, created.body.subject);

  const taken = await api(app.origin, "POST", "/register", {
    email: " B@EXAMPLE.com ",
    password: "another password",
  });
  assert.equal(taken.status, 409);
  assert.equal(taken.body.error, "email_taken");

  for (
    const body of [
      { email: "not-an-email", password: "correct horse battery" },
      { email: "c@example.com", password: "short" },
      { email: "c@example.com" },
      { password: "correct horse battery" },
      { email: ["c@example.com"], password: "correct horse battery" },
    ]
  ) {
    const res = await api(app.origin, "POST", "/register", body);
    assert.equal(res.status, 422, JSON.stringify(body));
  }
  assert.equal(await app.credentials.findByEmail("c@example.com"), null);
  // A taken email and invalid input over the form re-render the form.
  const b = new Browser(app.origin);
  const form = await b.post("/register", {
    email: "b@example.com",
    password: "correct horse battery",
  });
  assert.equal(form.status, 409);
  assert.match(await form.text(), /already registered/);
  const bad = await b.post("/register", {
    email: "x@example.com",
    password: "short",
  });
  assert.equal(bad.status, 422);
  await bad.body?.cancel();
});

Deno.test("POST /login: form 303 to next with the cookie; JSON 200 {token, expiresAt}; 401 wrong credentials", async () => {
  await using app = await startApp();
  await registerJson(app.origin, "d@example.com");
  const b = new Browser(app.origin);
  const res = await b.post("/login", {
    email: "d@example.com",
    password: "correct horse battery",
    next: "/account",
  });
  assert.equal(res.status, 303);
  assert.equal(res.headers.get("location"), "/account");
  assert.ok(b.cookies.has("__Host-session"));
  assert.equal((await b.page("/account")).status, 200);

  const noNext = await new Browser(app.origin).post("/login", {
    email: "d@example.com",
    password: "correct horse battery",
  });
  assert.equal(noNext.headers.get("location"), "/");

  const json = await api(app.origin, "POST", "/login", {
    email: "D@example.com",
    password: "correct horse battery",
  });
  assert.equal(json.status, 200);
  assert.equal(typeof json.body.token, "string");
  assert.equal(typeof json.body.expiresAt, "number");
  assert.equal(json.headers.get("set-cookie"), null);

  const wrong = await api(app.origin, "POST", "/login", {
    email: "d@example.com",
    password: "wrong password",
  });
  assert.equal(wrong.status, 401);
  const wrongForm = await new Browser(app.origin).post("/login", {
    email: "d@example.com",
    password: "wrong password",
  });
  assert.equal(wrongForm.status, 401);
  assert.match(await wrongForm.text(), /Email or password is incorrect/);
});

Deno.test("POST /logout revokes the jti: form 303 to /login clearing the cookie; bearer 204", async () => {
  await using app = await startApp();
  const b = new Browser(app.origin);
  await b.post("/register", {
    email: "e@example.com",
    password: "correct horse battery",
  });
  const token = b.cookies.get("__Host-session")!;
  const res = await b.post("/logout", {});
  assert.equal(res.status, 303);
  assert.equal(res.headers.get("location"), "/login");
  assert.ok(
    res.headers.getSetCookie().includes(
      "__Host-session=; Path=/; Secure; HttpOnly; SameSite=Lax; Max-Age=0",
    ),
  );
  assert.equal(
    await app.sessions.resolve(token),
    null,
    "the old cookie no longer works",
  );
  const replay = await api(app.origin, "GET", "/api/me", undefined, {
    cookie: `__Host-session=${token}`,
  });
  assert.equal(replay.status, 401);

  const { token: bearerToken } = await registerJson(
    app.origin,
    "f@example.com",
  );
  const out = await api(
    app.origin,
    "POST",
    "/logout",
    undefined,
    bearer(bearerToken),
  );
  assert.equal(out.status, 204);
  assert.equal(
    (await api(app.origin, "GET", "/api/me", undefined, bearer(bearerToken)))
      .status,
    401,
  );
});

Deno.test("finding 5 (GET /verify consumed the token): GET /verify shows a confirmation form and changes nothing; HEAD neither; POST /verify stamps verified_at, consumes, flashes and redirects to /; bad tokens get 400", async () => {
  // docs/http_contract.md (GET /verify): a GET from anything but the
  // account's signed-in browser (here a link scanner) redeems nothing.
  await using app = await startApp();
  const b = new Browser(app.origin);
  await b.post("/register", {
    email: "g@example.com",
    password: "correct horse battery",
  });
  await b.page("/"); // read the welcome flash
  const link = new URL(app.lastLink("g@example.com"));
  const token = link.searchParams.get("token")!;

  // A link scanner: anonymous GET and HEAD, several times.
  for (const method of ["GET", "HEAD", "GET"]) {
    const scan = await fetch(link, { method, redirect: "manual" });
    const text = await scan.text();
    assert.equal(scan.status, 200, method);
    // strict-origin: the token never leaves in a Referer, and the form's
    // POST carries the origin (no-referrer would make it Origin: null).
    assert.equal(scan.headers.get("referrer-policy"), "strict-origin");
    assert.deepEqual(scan.headers.getSetCookie(), [], "no cookie");
    if (method === "GET") {
      assert.match(text, /<form method="post" action="\/verify">/);
      assert.ok(text.includes(`name="token" value="${token}"`));
    }
  }
  assert.equal(
    (await app.credentials.findByEmail("g@example.com"))!.verifiedAt,
    0,
    "GET and HEAD verified nobody",
  );

  const res = await b.post("/verify", { token });
  assert.equal(res.status, 303);
  assert.equal(res.headers.get("location"), "/");
  assert.equal(res.headers.get("referrer-policy"), "strict-origin");
  assert.ok(
    !res.headers.getSetCookie().some((c) => c.startsWith("__Host-session=")),
    "redemption signs nobody in",
  );
  const home = await b.page("/");
  assert.match(home.body, /your email address is verified/i);
  const user = await app.credentials.findByEmail("g@example.com");
  assert.ok(user!.verifiedAt > 0);

  for (const bad of [token, "nope", "", "A".repeat(43)]) {
    const refused = await b.post("/verify", { token: bad });
    assert.equal(refused.status, 400, bad);
    assert.equal(refused.headers.get("referrer-policy"), "strict-origin");
    assert.match(await refused.text(), /does not work/);
  }
  const json = await api(app.origin, "POST", "/verify", { token: "nope" });
  assert.equal(json.status, 400);
  assert.equal(json.body.error, "invalid_link");
  const empty = await b.page("/verify");
  assert.equal(empty.status, 400);
  assert.equal(
    (await app.credentials.findByEmail("g@example.com"))!.verifiedAt,
    user!.verifiedAt,
    "nothing changed",
  );
});

Deno.test('finding 5, issue 27 (docs 3: a JSON request got 303 and an empty body): POST /verify redeems a JSON {token} and answers JSON, 200 {verified, credentialsRemoved, message}, no redirect and no flash cookie; "This wasn\'t me" too', async () => {
  await using app = await startApp();
  const { token } = await registerJson(app.origin, "gj@example.com");
  const link = new URL(app.lastLink("gj@example.com"));
  const res = await api(app.origin, "POST", "/verify", {
    token: link.searchParams.get("token"),
    password: "correct horse battery",
  });
  assert.equal(res.status, 200);
  assert.match(res.headers.get("content-type") ?? "", /^application\/json/);
  assert.equal(res.headers.get("location"), null);
  assert.equal(res.headers.get("set-cookie"), null);
  assert.equal(res.headers.get("referrer-policy"), "strict-origin");
  assert.deepEqual(res.body, {
    verified: true,
    credentialsRemoved: false,
    message: "Thank you: your email address is verified.",
  });
  const me = await api(app.origin, "GET", "/api/me", undefined, bearer(token));
  assert.equal(me.body.verified, true);

  await registerJson(app.origin, "gk@example.com");
  const other = new URL(app.lastLink("gk@example.com"));
  const disowned = await api(app.origin, "POST", "/verify", {
    token: other.searchParams.get("token"),
    disown: "1",
  });
  assert.equal(disowned.status, 200);
  assert.equal(disowned.body.verified, true);
  assert.equal(disowned.body.credentialsRemoved, true);
  assert.match(String(disowned.body.message), /removed/);
  // A form still gets the browser's answer.
  await registerJson(app.origin, "gl@example.com");
  const form = await new Browser(app.origin).post("/verify", {
    token: new URL(app.lastLink("gl@example.com")).searchParams.get("token")!,
    password: "correct horse battery",
  });
  assert.equal(form.status, 303);
  assert.equal(form.headers.get("location"), "/");
});

Deno.test("POST /verify/resend (signed in) mails a new link, flashes and redirects back; 401 anonymous", async () => {
  await using app = await startApp();
  const b = new Browser(app.origin);
  await b.post("/register", {
    email: "h@example.com",
    password: "correct horse battery",
  });
  const first = app.lastLink("h@example.com");
  const res = await b.post("/verify/resend", { next: "/account" });
  assert.equal(res.status, 303);
  assert.equal(res.headers.get("location"), "/account");
  const second = app.lastLink("h@example.com");
  assert.notEqual(first, second);
  assert.match((await b.page("/account")).body, /new verification link/);
  const anonymous = await new Browser(app.origin).post("/verify/resend", {});
  assert.equal(anonymous.status, 401);
  await anonymous.body?.cancel();
});

Deno.test("GET /account: 200 HTML when signed in; 303 to /login?next=/account for a browser when not", async () => {
  await using app = await startApp();
  const b = new Browser(app.origin);
  const anon = await b.fetch("/account");
  assert.equal(anon.status, 303);
  assert.equal(anon.headers.get("location"), "/login?next=%2Faccount");
  await b.post("/register", {
    email: "i@example.com",
    password: "correct horse battery",
  });
  const page = await b.page("/account");
  assert.equal(page.status, 200);
  assert.match(page.body, /i@example\.com/);
  // An API client gets 401, not a redirect.
  const apiRes = await api(app.origin, "GET", "/account");
  assert.equal(apiRes.status, 401);
  const bearerRes = await api(
    app.origin,
    "GET",
    "/account",
    undefined,
    bearer("bogus"),
  );
  assert.equal(bearerRes.status, 401);
  assert.match(bearerRes.headers.get("www-authenticate")!, /^Bearer/);
});

Deno.test("GET /api/me: 200 {subject, email, verified} by cookie or bearer; 401 anonymous", async () => {
  await using app = await startApp();
  const { subject, token } = await registerJson(app.origin, "j@example.com");
  const me = await api(app.origin, "GET", "/api/me", undefined, bearer(token));
  assert.equal(me.status, 200);
  assert.deepEqual(me.body, {
    subject,
    email: "j@example.com",
    verified: false,
  });
  const b = new Browser(app.origin);
  await b.post("/login", {
    email: "j@example.com",
    password: "correct horse battery",
  });
  const byCookie = await b.fetch("/api/me", {
    headers: { accept: "application/json" },
  });
  assert.equal(byCookie.status, 200);
  assert.equal((await byCookie.json()).subject, subject);
  const anon = await api(app.origin, "GET", "/api/me");
  assert.equal(anon.status, 401);
  assert.equal(anon.body.error, "unauthenticated");
});

Deno.test("notes: create 201 when verified, 403 unverified; view 200 for any signed-in user, 401 anonymous; edit 200 owner, 403 other", async () => {
  await using app = await startApp();
  const owner = await registerJson(app.origin, "k@example.com");
  const other = await registerJson(app.origin, "l@example.com");
  const unverified = await api(
    app.origin,
    "POST",
    "/api/notes",
    { text: "hi" },
    bearer(owner.token),
  );
  assert.equal(unverified.status, 403);
  assert.equal(unverified.body.error, "unverified");

  assert.equal((await redeemLink(app.lastLink("k@example.com"))).status, 303);
  const created = await api(
    app.origin,
    "POST",
    "/api/notes",
    { text: "hello" },
    bearer(owner.token),
  );
  assert.equal(created.status, 201);
  const id = created.body.id as string;
  assert.equal(typeof id, "string");

  const empty = await api(
    app.origin,
    "POST",
    "/api/notes",
    { text: "" },
    bearer(owner.token),
  );
  assert.equal(empty.status, 422);

  const viewOther = await api(
    app.origin,
    "GET",
    `/api/notes/${id}`,
    undefined,
    bearer(other.token),
  );
  assert.equal(viewOther.status, 200);
  assert.equal(viewOther.body.text, "hello");
  assert.equal((await api(app.origin, "GET", `/api/notes/${id}`)).status, 401);

  const editOther = await api(app.origin, "PUT", `/api/notes/${id}`, {
    text: "pwned",
  }, bearer(other.token));
  assert.equal(editOther.status, 403);
  const editOwner = await api(app.origin, "PUT", `/api/notes/${id}`, {
    text: "edited",
  }, bearer(owner.token));
  assert.equal(editOwner.status, 200);
  const after = await api(
    app.origin,
    "GET",
    `/api/notes/${id}`,
    undefined,
    bearer(other.token),
  );
  assert.equal(after.body.text, "edited");
  assert.equal(
    (await api(app.origin, "PUT", `/api/notes/${id}`, { text: "x" })).status,
    401,
  );
  assert.equal(
    (await api(app.origin, "POST", "/api/notes", { text: "x" })).status,
    401,
  );
});

Deno.test("a password change signs the user out everywhere (revokeAll) and keeps this browser signed in", async () => {
  await using app = await startApp();
  const { token } = await registerJson(
    app.origin,
    "m@example.com",
    "first long password",
  );
  const b = new Browser(app.origin);
  await b.post("/login", {
    email: "m@example.com",
    password: "first long password",
  });
  app.advance(1000);
  const wrong = await b.post("/account/password", {
    currentPassword: "nope nope",
    newPassword: "second long password",
  });
  assert.equal(wrong.status, 401);
  await wrong.body?.cancel();
  const res = await b.post("/account/password", {
    currentPassword: "first long password",
    newPassword: "second long password",
  });
  assert.equal(res.status, 303);
  assert.equal(
    (await api(app.origin, "GET", "/api/me", undefined, bearer(token))).status,
    401,
  );
  assert.equal((await b.page("/account")).status, 200);
  const old = await api(app.origin, "POST", "/login", {
    email: "m@example.com",
    password: "first long password",
  });
  assert.equal(old.status, 401);
  const fresh = await api(app.origin, "POST", "/login", {
    email: "m@example.com",
    password: "second long password",
  });
  assert.equal(fresh.status, 200);
});
