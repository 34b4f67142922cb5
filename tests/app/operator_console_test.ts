/**
 * The operator's console on the reference app over HTTP (issue 28;
 * SECURITY.md item 60): who is an operator is the app's predicate (fail
 * closed), every console path answers 404 to anyone else, the operator's
 * password re-check, the user list and search, one user's account, bans
 * (every sign-in refused as a wrong password, keys stopped, recorded),
 * sign-outs, and impersonation (the actor on the identity, the time
 * limit, the banner, what it may not do, every write recorded on both
 * sides, the way back), behind the cross-origin protection.
 */
import assert from "node:assert/strict";
import {
  api,
  bearer,
  Browser,
  registerJson,
  startApp,
  type StartOptions,
  type TestApp,
  verifyDirectly,
} from "./_harness.ts";
import {
  type IsOperator,
  operatorConsole,
} from "../../packages/accounts/mod.ts";

const PASSWORD = "correct horse battery";
const OPS = "ops@example.com";
const ENV = {
  TOTP: "off",
  PASSKEYS: "off",
  MAGIC_LINK: "on",
  OPERATORS: `${OPS}, ops2@example.com`,
};

function start(options: StartOptions = {}) {
  return startApp({}, { signInEnv: ENV, ...options });
}

/** An app whose console asks `isOperator` instead of `OPERATORS`. */
function withPredicate(isOperator: IsOperator) {
  return start({
    wrapModules: (list) =>
      list.map((m) =>
        m.name === "operator_console" ? operatorConsole({ isOperator }) : m
      ),
  });
}

async function verifiedUser(app: TestApp, email: string) {
  const r = await registerJson(app.origin, email, PASSWORD);
  await verifyDirectly(app, email);
  return r;
}

/** The operator signed in in a browser, the console confirmed. */
async function operatorBrowser(app: TestApp, email = OPS) {
  await verifiedUser(app, email);
  const b = new Browser(app.origin);
  const login = await b.post("/login", { email, password: PASSWORD });
  assert.equal(login.status, 303);
  const confirmed = await b.post("/console/confirm", {
    password: PASSWORD,
    next: "/console/users",
  });
  assert.equal(confirmed.status, 303, await confirmed.text());
  return b;
}

const CONSOLE_ROUTES: [string, string][] = [
  ["GET", "/console"],
  ["POST", "/console/confirm"],
  ["GET", "/console/users"],
  ["GET", "/console/users/x"],
  ["POST", "/console/users/x/ban"],
  ["POST", "/console/users/x/unban"],
  ["POST", "/console/users/x/sessions/revoke"],
  ["POST", "/console/users/x/sessions/revoke-all"],
  ["POST", "/console/users/x/impersonate"],
  ["GET", "/api/console/users"],
  ["GET", "/api/console/users/x"],
  // Wrong methods and unknown paths under the console: the same 404.
  ["DELETE", "/console/users"],
  ["GET", "/console/users/x/ban"],
  ["PUT", "/api/console/nothing"],
];

/** What a path no route has answers, JSON and HTML. */
async function notFoundAnswers(origin: string) {
  const json = await fetch(new URL("/no/such/path", origin), {
    headers: { accept: "application/json" },
  });
  const html = await fetch(new URL("/no/such/path", origin), {
    headers: { accept: "text/html" },
  });
  return { json: await json.text(), html: await html.text() };
}

async function assertHidden(
  app: TestApp,
  headers: Record<string, string>,
  who: string,
) {
  const expected = await notFoundAnswers(app.origin);
  for (const [method, path] of CONSOLE_ROUTES) {
    for (const accept of ["application/json", "text/html"]) {
      const res = await fetch(new URL(path, app.origin), {
        method,
        headers: {
          accept,
          ...headers,
          ...(method === "GET" ? {} : {
            "content-type": "application/json",
            "sec-fetch-site": "same-origin",
          }),
        },
        body: method === "GET" ? undefined : "{}",
        redirect: "manual",
      });
      const text = await res.text();
      assert.equal(res.status, 404, `${who}: ${method} ${path}`);
      assert.equal(
        text,
        accept === "text/html" ? expected.html : expected.json,
        `${who}: ${method} ${path} answers what an unknown path answers`,
      );
    }
  }
}

Deno.test("every console route answers 404, exactly as a path no route has, to anyone but an operator: anonymous, a user, an unverified operator address, the operator's API key", async () => {
  await using app = await start();
  await assertHidden(app, {}, "anonymous");
  const { token } = await verifiedUser(app, "user@example.com");
  await assertHidden(app, bearer(token) as Record<string, string>, "a user");
  // The operator's address, registered but not verified: nobody's yet.
  const { token: unverified } = await registerJson(app.origin, OPS, PASSWORD);
  await assertHidden(
    app,
    bearer(unverified) as Record<string, string>,
    "an unverified operator address",
  );
  // The operator's own API key is no person.
  await verifyDirectly(app, OPS);
  const login = await api(app.origin, "POST", "/login", {
    email: OPS,
    password: PASSWORD,
  });
  const key = await api(app.origin, "POST", "/api/keys", {
    name: "ops",
    scopes: "notes:view",
    password: PASSWORD,
  }, bearer(login.body.token));
  assert.equal(key.status, 201);
  await assertHidden(
    app,
    bearer(key.body.key) as Record<string, string>,
    "the operator's API key",
  );
  // The operator in person reaches it.
  const me = await api(
    app.origin,
    "GET",
    "/api/console/users",
    undefined,
    bearer(login.body.token),
  );
  assert.equal(me.status, 403);
  assert.equal(me.body.error, "reauthentication_required");
});

Deno.test("an operator check that throws, rejects, answers something else than true, or hangs lets nobody in (fail closed)", async () => {
  const predicates: [string, IsOperator][] = [
    ["throws", () => {
      throw new Error("directory down");
    }],
    ["rejects", () => Promise.reject(new Error("directory down"))],
    ["answers 1", () => 1 as unknown as boolean],
    ["answers 'yes'", () => Promise.resolve("yes" as unknown as boolean)],
    ["hangs", () => new Promise<boolean>(() => {})],
  ];
  for (const [what, isOperator] of predicates) {
    await using app = await withPredicate(isOperator);
    const { token } = await verifiedUser(app, OPS);
    const started = Date.now();
    const res = await api(
      app.origin,
      "GET",
      "/api/console/users",
      undefined,
      bearer(token),
    );
    assert.equal(res.status, 404, what);
    assert.equal(res.body.error, "not_found", what);
    assert.ok(Date.now() - started < 5000, `${what}: within the deadline`);
    if (what === "throws" || what === "hangs") {
      assert.ok(
        app.logs.some((l) => l.includes("isOperator")),
        `${what}: logged`,
      );
    }
  }
});

Deno.test("the console needs the operator's password again: a page asks for it, JSON gets 403, a wrong one 401, the right one opens the console for this session", async () => {
  await using app = await start();
  await verifiedUser(app, OPS);
  const b = new Browser(app.origin);
  await b.post("/login", { email: OPS, password: PASSWORD });
  const ask = await b.page("/console/users?q=a");
  assert.equal(ask.status, 200);
  assert.match(ask.body, /action="\/console\/confirm"/);
  assert.match(ask.body, /name="next" value="\/console\/users\?q=a"/);
  assert.doesNotMatch(ask.body, /id="users"/);
  const json = await b.fetch("/api/console/users", {
    headers: { accept: "application/json" },
  });
  assert.equal(json.status, 403);
  const wrong = await b.post("/console/confirm", {
    password: "not the password",
    next: "/console/users",
  });
  assert.equal(wrong.status, 401);
  assert.match(await wrong.text(), /incorrect/);
  const right = await b.post("/console/confirm", {
    password: PASSWORD,
    next: "/console/users?q=a",
  });
  assert.equal(right.status, 303);
  assert.equal(right.headers.get("location"), "/console/users?q=a");
  // `next` stays in the console.
  const away = await b.post("/console/confirm", {
    password: PASSWORD,
    next: "//evil.example/",
  });
  assert.equal(away.headers.get("location"), "/console/users");
  assert.equal((await b.page("/console/users")).status, 200);
  // Another session of the operator is not confirmed by this one.
  const other = await api(app.origin, "POST", "/login", {
    email: OPS,
    password: PASSWORD,
  });
  assert.equal(
    (await api(
      app.origin,
      "GET",
      "/api/console/users",
      undefined,
      bearer(other.body.token),
    )).status,
    403,
  );
  // The confirmation lapses.
  app.advance(10 * 60_000 + 1);
  assert.match((await b.page("/console/users")).body, /\/console\/confirm/);
});

Deno.test("users: searched by email (wildcards taken literally), listed a page at a time, as pages and JSON", async () => {
  await using app = await startApp({
    limits: { registerPerAddress: { max: 100, windowSeconds: 3600 } },
  }, { signInEnv: ENV });
  const b = await operatorBrowser(app);
  for (let i = 0; i < 30; i++) {
    await registerJson(
      app.origin,
      `user${String(i).padStart(2, "0")}@example.com`,
      PASSWORD,
    );
  }
  await registerJson(app.origin, "other@test.example", PASSWORD);
  const first = await b.page("/console/users?q=example.com");
  assert.equal(first.status, 200);
  const emails = [...first.body.matchAll(/>([a-z0-9]+@[a-z.]+)<\/a>/g)].map((
    m,
  ) => m[1]);
  assert.equal(emails.length, 25);
  assert.deepEqual(emails, [...emails].sort());
  const next = /id="next-page" href="([^"]+)"/.exec(first.body)?.[1]
    .replaceAll("&amp;", "&");
  assert.ok(next);
  const second = await b.page(next);
  const rest = [...second.body.matchAll(/>([a-z0-9]+@[a-z.]+)<\/a>/g)].map((
    m,
  ) => m[1]);
  assert.ok(rest.length > 0 && rest.every((e) => !emails.includes(e)));
  assert.equal(emails.length + rest.length, 31, "30 users and the operator");
  assert.doesNotMatch(second.body, /id="next-page"/);
  // JSON, with the cursor.
  const json = await b.fetch("/api/console/users?q=user1", {
    headers: { accept: "application/json" },
  });
  const body = await json.json();
  assert.deepEqual(
    body.users.map((u: { email: string }) => u.email),
    Array.from({ length: 10 }, (_, i) => `user1${i}@example.com`),
  );
  assert.equal(body.next, null);
  assert.deepEqual(Object.keys(body.users[0]).sort(), [
    "banned",
    "createdAt",
    "email",
    "id",
    "verified",
  ]);
  // LIKE wildcards are searched for, not expanded.
  for (const q of ["%", "_", "user_1"]) {
    const r = await b.fetch(`/api/console/users?q=${encodeURIComponent(q)}`, {
      headers: { accept: "application/json" },
    });
    assert.deepEqual((await r.json()).users, [], q);
  }
});

Deno.test("one user's page and JSON: address, verification, sign-in methods, sessions, keys and activity", async () => {
  await using app = await start();
  const b = await operatorBrowser(app);
  const { subject, token } = await verifiedUser(app, "seen@example.com");
  await api(app.origin, "POST", "/api/keys", {
    name: "deploy",
    scopes: "notes:view",
    password: PASSWORD,
  }, bearer(token));
  const res = await b.fetch(`/api/console/users/${subject}`, {
    headers: { accept: "application/json" },
  });
  assert.equal(res.status, 200);
  const view = await res.json();
  assert.equal(view.user.email, "seen@example.com");
  assert.equal(view.user.verified, true);
  assert.deepEqual(view.methods, ["password"]);
  assert.equal(view.sessions.length, 1);
  assert.equal(view.keys[0].name, "deploy");
  assert.ok(!JSON.stringify(view).includes("secret_hash"));
  assert.ok(
    view.activity.some((e: { type: string }) => e.type === "registered"),
  );
  const page = await b.page(`/console/users/${subject}`);
  assert.match(page.body, /id="user-email">seen@example.com</);
  assert.match(page.body, /deploy/);
  assert.match(page.body, /action="\/console\/users\/[^"]+\/ban"/);
  assert.equal(
    (await b.fetch("/api/console/users/nobody", {
      headers: { accept: "application/json" },
    })).status,
    404,
  );
});

Deno.test("a ban signs the user out everywhere, refuses every sign-in method with the answer a wrong password gets, stops their keys, is recorded, and lifts", async () => {
  await using app = await start();
  const b = await operatorBrowser(app);
  const { subject, token } = await verifiedUser(app, "bad@example.com");
  const key = (await api(app.origin, "POST", "/api/keys", {
    name: "k",
    scopes: "notes:view",
    password: PASSWORD,
  }, bearer(token))).body.key as string;
  const noReason = await b.post(`/console/users/${subject}/ban`, {
    reason: " ",
  });
  assert.equal(noReason.status, 422);
  const banned = await b.post(`/console/users/${subject}/ban`, {
    reason: "sending spam",
  });
  assert.equal(banned.status, 303);
  assert.equal(
    (await b.post(`/console/users/${subject}/ban`, { reason: "again" })).status,
    409,
  );
  // Signed out everywhere; the key stops.
  assert.equal(
    (await api(app.origin, "GET", "/api/me", undefined, bearer(token))).status,
    401,
  );
  assert.equal(
    (await api(app.origin, "GET", "/api/me", undefined, bearer(key))).status,
    401,
  );
  // The right password answers exactly what a wrong one does, form and JSON.
  for (const kind of ["json", "form"] as const) {
    const send = (password: string) =>
      kind === "json"
        ? fetch(new URL("/login", app.origin), {
          method: "POST",
          headers: {
            "content-type": "application/json",
            accept: "application/json",
          },
          body: JSON.stringify({ email: "bad@example.com", password }),
        })
        : fetch(new URL("/login", app.origin), {
          method: "POST",
          headers: {
            "content-type": "application/x-www-form-urlencoded",
            "sec-fetch-site": "same-origin",
          },
          body: new URLSearchParams({ email: "bad@example.com", password }),
        });
    // (Past the login throttle's free attempts: each pair a minute apart.)
    app.advance(60_000);
    const right = await send(PASSWORD);
    app.advance(60_000);
    const wrong = await send("a wrong password here");
    assert.equal(right.status, 401, kind);
    assert.equal(wrong.status, 401, kind);
    assert.equal(await right.text(), await wrong.text(), kind);
    assert.equal(right.headers.get("set-cookie"), null);
  }
  // A sign-in link: mailed or not, it signs nobody in; the answer is a
  // wrong password's.
  await api(app.origin, "POST", "/magic-link", { email: "bad@example.com" });
  const link = new URL(await app.awaitLink("bad@example.com", 2));
  const redeemed = await api(app.origin, "POST", "/magic-link/callback", {
    token: link.searchParams.get("token"),
  });
  assert.equal(redeemed.status, 401);
  assert.equal(redeemed.body.error, "invalid_credentials");
  assert.equal(redeemed.body.token, undefined);
  // Recorded on the user's side (with the operator as actor) and the
  // operator's.
  const ops = (await app.credentials.findByEmail(OPS))!.id;
  const events = await app.query(
    "SELECT subject, type, actor, detail FROM auth_events WHERE type IN ('account_banned', 'operator_acted') ORDER BY at",
  );
  assert.deepEqual(
    events.map((e) => [e.subject, e.type, e.actor, e.detail]),
    [
      [subject, "account_banned", ops, null],
      [ops, "operator_acted", null, "bad@example.com: sending spam"],
    ],
  );
  // Lifted: the password and the key work again.
  assert.equal(
    (await b.post(`/console/users/${subject}/unban`, {})).status,
    303,
  );
  app.advance(60_000);
  const back = await api(app.origin, "POST", "/login", {
    email: "bad@example.com",
    password: PASSWORD,
  });
  assert.equal(back.status, 200);
  assert.equal(
    (await api(app.origin, "GET", "/api/me", undefined, bearer(key))).status,
    200,
  );
  // An operator's account is not banned from the console.
  const other = await verifiedUser(app, "ops2@example.com");
  assert.equal(
    (await b.post(`/console/users/${other.subject}/ban`, { reason: "x" }))
      .status,
    403,
  );
});

Deno.test("an operator signs out one session of a user, or all of them", async () => {
  await using app = await start();
  const b = await operatorBrowser(app);
  const { subject, token } = await verifiedUser(app, "s@example.com");
  const second = await api(app.origin, "POST", "/login", {
    email: "s@example.com",
    password: PASSWORD,
  });
  const view = await (await b.fetch(`/api/console/users/${subject}`, {
    headers: { accept: "application/json" },
  })).json();
  assert.equal(view.sessions.length, 2);
  const one = view.sessions.find((s: { id: string }) =>
    s.id !== view.sessions[0].id
  );
  assert.equal(
    (await b.post(`/console/users/${subject}/sessions/revoke`, {
      session: "x",
    })).status,
    404,
  );
  assert.equal(
    (await b.post(`/console/users/${subject}/sessions/revoke`, {
      session: one.id,
    })).status,
    303,
  );
  const alive = [
    (await api(app.origin, "GET", "/api/me", undefined, bearer(token))).status,
    (await api(
      app.origin,
      "GET",
      "/api/me",
      undefined,
      bearer(second.body.token),
    )).status,
  ].sort();
  assert.deepEqual(alive, [200, 401]);
  assert.equal(
    (await b.post(`/console/users/${subject}/sessions/revoke-all`, {})).status,
    303,
  );
  for (const t of [token, second.body.token]) {
    assert.equal(
      (await api(app.origin, "GET", "/api/me", undefined, bearer(t))).status,
      401,
    );
  }
});

Deno.test("cross-site posts to the console are refused 403 and change nothing", async () => {
  await using app = await start();
  const b = await operatorBrowser(app);
  const { subject, token } = await verifiedUser(app, "x@example.com");
  for (
    const [path, fields] of [
      [`/console/users/${subject}/ban`, { reason: "csrf" }],
      [`/console/users/${subject}/sessions/revoke-all`, {}],
      [`/console/users/${subject}/impersonate`, {}],
      ["/console/confirm", { password: PASSWORD }],
    ] as const
  ) {
    const forged: Record<string, string>[] = [
      { "sec-fetch-site": "cross-site" },
      { "sec-fetch-site": "same-site" },
    ];
    for (const headers of forged) {
      const res = await b.post(path, fields, headers);
      assert.equal(res.status, 403, `${path} ${JSON.stringify(headers)}`);
      assert.match(await res.text(), /cross/i);
    }
  }
  assert.equal(
    (await api(app.origin, "GET", "/api/me", undefined, bearer(token))).status,
    200,
  );
  assert.equal((await app.query("SELECT * FROM account_bans")).length, 0);
  assert.equal(
    b.cookies.has("__Host-operator") || b.cookies.has("operator"),
    false,
  );
});

/** The user's and operator's browsers with an impersonation started. */
async function impersonating(app: TestApp) {
  const b = await operatorBrowser(app);
  const user = await verifiedUser(app, "helped@example.com");
  const ownCookie = [...b.cookies.entries()].find(([k]) =>
    k.endsWith("session")
  )!;
  const started = await b.post(
    `/console/users/${user.subject}/impersonate`,
    {},
  );
  assert.equal(started.status, 303, await started.text());
  assert.equal(started.headers.get("location"), "/");
  return { b, user, ownCookie };
}

Deno.test("impersonation: the session is the user's with the operator as its actor, every page shows the banner and an end button, and ending it returns to the operator's own session", async () => {
  await using app = await start();
  const { b, user, ownCookie } = await impersonating(app);
  const ops = (await app.credentials.findByEmail(OPS))!.id;
  const me = await (await b.fetch("/api/me", {
    headers: { accept: "application/json" },
  })).json();
  assert.equal(me.subject, user.subject);
  assert.equal(me.actor, ops);
  for (const path of ["/", "/account", "/login", "/password/forgot"]) {
    const page = await b.page(path);
    assert.match(page.body, /id="impersonation-banner"/, path);
    assert.match(
      page.body,
      /ops@example.com<\/strong> is acting as <strong>helped@example.com/,
      path,
    );
    assert.match(page.body, /action="\/impersonation\/end"/, path);
  }
  // An error page too.
  const missing = await b.page("/no/such/page");
  assert.equal(missing.status, 404);
  assert.match(missing.body, /id="impersonation-banner"/);
  // The user sees it in their sessions (an operator's) and activity.
  const account = await b.page("/account");
  assert.match(account.body, /an operator acting as you/i);
  const ended = await b.post("/impersonation/end", {});
  assert.equal(ended.status, 303);
  assert.equal(
    ended.headers.get("location"),
    `/console/users/${user.subject}`,
  );
  const after = await (await b.fetch("/api/me", {
    headers: { accept: "application/json" },
  })).json();
  assert.equal(after.subject, ops);
  assert.equal(after.actor, undefined);
  // The operator's own session, the very token: the console confirmation of
  // it still holds.
  assert.equal(b.cookies.get(ownCookie[0]), ownCookie[1]);
  assert.equal((await b.page("/console/users")).status, 200);
  assert.doesNotMatch((await b.page("/")).body, /impersonation-banner/);
  const events = await app.query(
    "SELECT subject, type, actor, detail FROM auth_events WHERE type LIKE 'impersonation_%' ORDER BY at, type",
  );
  assert.deepEqual(
    events.map((e) => `${e.subject} ${e.type} ${e.actor}`).sort(),
    [
      `${user.subject} impersonation_started ${ops}`,
      `${ops} impersonation_started null`,
      `${user.subject} impersonation_ended ${ops}`,
      `${ops} impersonation_ended null`,
    ].sort(),
  );
});

Deno.test("an impersonator cannot change the password, the address, a key or delete the account; each attempt is refused 403 and recorded", async () => {
  await using app = await start();
  const { b, user } = await impersonating(app);
  const attempts: [string, Record<string, string>][] = [
    ["/account/password", {
      currentPassword: PASSWORD,
      newPassword: "the operator's choice",
    }],
    ["/account/password/link", {}],
    ["/account/email", { email: "ops-owned@example.com", password: PASSWORD }],
    ["/account/delete", { password: PASSWORD }],
    ["/account/keys", { name: "backdoor", password: PASSWORD }],
  ];
  for (const [path, fields] of attempts) {
    const res = await b.post(path, fields, { accept: "application/json" });
    assert.equal(res.status, 403, path);
    assert.equal((await res.json()).error, "impersonation_refused", path);
  }
  const json = await b.fetch("/api/keys", {
    method: "POST",
    headers: {
      "content-type": "application/json",
      accept: "application/json",
      "sec-fetch-site": "same-origin",
    },
    body: JSON.stringify({ name: "x", password: PASSWORD }),
  });
  assert.equal(json.status, 403);
  // Nothing changed: the password still works, the address is the same.
  const login = await api(app.origin, "POST", "/login", {
    email: "helped@example.com",
    password: PASSWORD,
  });
  assert.equal(login.status, 200);
  assert.equal(
    (await app.credentials.findById(user.subject))?.email,
    "helped@example.com",
  );
  assert.equal((await app.query("SELECT * FROM api_keys")).length, 0);
  // Each attempt is on the record, with the operator as actor.
  const tried = await app.query(
    `SELECT detail FROM auth_events WHERE subject = '${user.subject}' AND type = 'operator_acted'`,
  );
  assert.ok(
    tried.some((e) => String(e.detail) === "POST /account/password → 403"),
    JSON.stringify(tried),
  );
});

Deno.test("every write during an impersonation records the actor on the user's side and on the operator's", async () => {
  await using app = await start();
  const { b, user } = await impersonating(app);
  const ops = (await app.credentials.findByEmail(OPS))!.id;
  const note = await b.fetch("/api/notes", {
    method: "POST",
    headers: {
      "content-type": "application/json",
      accept: "application/json",
      "sec-fetch-site": "same-origin",
    },
    body: JSON.stringify({ text: "written by support" }),
  });
  assert.equal(note.status, 201);
  const rows = await app.query(
    "SELECT subject, type, actor, detail FROM auth_events WHERE type = 'operator_acted' ORDER BY at",
  );
  assert.deepEqual(
    rows.map((e) => [e.subject, e.actor, e.detail]),
    [
      [user.subject, ops, "POST /api/notes → 201"],
      [ops, null, "as helped@example.com: POST /api/notes → 201"],
    ],
  );
  // The user's activity says an operator acted, not which one.
  const activity = await b.page("/account");
  assert.match(activity.body, /An operator acted on your account/);
  // So does the JSON of a later session of the user's own.
  const own = await api(app.origin, "POST", "/login", {
    email: "helped@example.com",
    password: PASSWORD,
  });
  const list = await api(
    app.origin,
    "GET",
    "/api/activity",
    undefined,
    bearer(own.body.token),
  );
  const acted = (list.body.events as { type: string; byOperator: boolean }[])
    .filter((e) => e.type === "operator_acted");
  assert.equal(acted.length, 1);
  assert.equal(acted[0].byOperator, true);
  assert.ok(
    !JSON.stringify(list.body).includes(ops),
    "the operator is not named to the user",
  );
});

Deno.test("impersonation past its time limit: the session dies at 15 minutes, is never renewed, a re-mint keeps its end, and the next page returns to the operator's session", async () => {
  await using app = await start();
  const { b, user } = await impersonating(app);
  const ops = (await app.credentials.findByEmail(OPS))!.id;
  const me = async () =>
    await (await b.fetch("/api/me", {
      headers: { accept: "application/json" },
    }))
      .json();
  // "Sign out everywhere else" re-mints the session: still the operator's,
  // still ending when it did.
  app.advance(10 * 60_000);
  const again = await b.post("/account/sessions/revoke-others", {});
  assert.equal(again.status, 303);
  assert.equal((await me()).actor, ops);
  app.advance(5 * 60_000 - 1000);
  assert.equal((await me()).subject, user.subject);
  app.advance(1000);
  const gone = await b.fetch("/api/me", {
    headers: { accept: "application/json" },
  });
  assert.equal(gone.status, 401);
  // The next page brings the operator's own session back.
  const back = await b.fetch("/account");
  assert.equal(back.status, 303);
  assert.equal(back.headers.get("location"), "/account");
  assert.equal((await me()).subject, ops);
  assert.doesNotMatch((await b.page("/account")).body, /impersonation-banner/);
});

Deno.test("an operator cannot act as another operator, nor as anyone when the predicate cannot tell; nor as a banned account", async () => {
  await using app = await start();
  const b = await operatorBrowser(app);
  const other = await verifiedUser(app, "ops2@example.com");
  const refused = await b.post(
    `/console/users/${other.subject}/impersonate`,
    {},
    {
      accept: "application/json",
    },
  );
  assert.equal(refused.status, 403);
  assert.equal((await refused.json()).error, "target_is_operator");
  const page = await b.page(`/console/users/${other.subject}`);
  assert.doesNotMatch(page.body, /id="impersonate"/);
  const banned = await verifiedUser(app, "banned@example.com");
  await b.post(`/console/users/${banned.subject}/ban`, { reason: "abuse" });
  const no = await b.post(`/console/users/${banned.subject}/impersonate`, {}, {
    accept: "application/json",
  });
  assert.equal(no.status, 409);
  // A predicate that cannot answer for the target: refused (fail closed).
  await using strict = await withPredicate((u) => {
    if (u.email === OPS) return true;
    throw new Error("directory down");
  });
  const ob = await operatorBrowser(strict);
  const target = await verifiedUser(strict, "anyone@example.com");
  const res = await ob.post(
    `/console/users/${target.subject}/impersonate`,
    {},
    {
      accept: "application/json",
    },
  );
  assert.equal(res.status, 403);
});

Deno.test("impersonation over JSON: a Bearer operator gets a Bearer token of the user, never bound, and ends it with 204 while keeping its own", async () => {
  await using app = await start();
  await verifiedUser(app, OPS);
  const { subject } = await verifiedUser(app, "api@example.com");
  const login = await api(app.origin, "POST", "/login", {
    email: OPS,
    password: PASSWORD,
  });
  const own = login.body.token as string;
  assert.equal(
    (await api(
      app.origin,
      "POST",
      "/console/confirm",
      { password: PASSWORD },
      bearer(own),
    )).status,
    200,
  );
  const started = await api(
    app.origin,
    "POST",
    `/console/users/${subject}/impersonate`,
    {},
    bearer(own),
  );
  assert.equal(started.status, 201);
  assert.equal(started.body.tokenType, "Bearer");
  assert.equal(started.body.subject, subject);
  assert.ok(
    (started.body.expiresAt as number) <=
      Math.floor(app.now() / 1000) + 15 * 60,
  );
  const held = started.body.token as string;
  const me = await api(app.origin, "GET", "/api/me", undefined, bearer(held));
  assert.equal(me.body.subject, subject);
  assert.ok(me.body.actor);
  // Not a console session: the console is hidden from it.
  assert.equal(
    (await api(
      app.origin,
      "GET",
      "/api/console/users",
      undefined,
      bearer(held),
    )).status,
    404,
  );
  const ended = await api(
    app.origin,
    "POST",
    "/impersonation/end",
    {},
    bearer(held),
  );
  assert.equal(ended.status, 204);
  assert.equal(
    (await api(app.origin, "GET", "/api/me", undefined, bearer(held))).status,
    401,
  );
  assert.equal(
    (await api(app.origin, "GET", "/api/me", undefined, bearer(own))).status,
    200,
  );
  // Ending with no impersonation: 409.
  assert.equal(
    (await api(app.origin, "POST", "/impersonation/end", {}, bearer(own)))
      .status,
    409,
  );
});

Deno.test("a mailed link never takes an impersonation or an API key for the account's own browser: the email change still needs the password", async () => {
  await using app = await start();
  const user = await verifiedUser(app, "moving@example.com");
  // The user asks for a change in person; the link goes to the new address.
  const asked = await api(app.origin, "POST", "/account/email", {
    email: "new-home@example.com",
    password: PASSWORD,
  }, bearer(user.token));
  assert.equal(asked.status, 202);
  const link = new URL(await app.awaitLink("new-home@example.com"));
  const token = link.searchParams.get("token")!;
  // An operator acting as the user opens it: a page with a form, no change.
  const b = await operatorBrowser(app);
  await b.post(`/console/users/${user.subject}/impersonate`, {});
  const opened = await b.page(`/account/email/confirm?token=${token}`);
  assert.equal(opened.status, 200);
  assert.match(opened.body, /name="token"/);
  const posted = await b.post("/account/email/confirm", { token }, {
    accept: "application/json",
  });
  assert.equal(posted.status, 401);
  // An API key of the user's, likewise.
  const key = (await api(
    app.origin,
    "POST",
    "/api/keys",
    {
      name: "k",
      scopes: "notes:view",
      password: PASSWORD,
    },
    bearer(
      (await api(app.origin, "POST", "/login", {
        email: "moving@example.com",
        password: PASSWORD,
      })).body.token,
    ),
  )).body.key;
  const byKey = await api(app.origin, "POST", "/account/email/confirm", {
    token,
  }, bearer(key));
  assert.equal(byKey.status, 401);
  assert.equal(
    (await app.credentials.findById(user.subject))?.email,
    "moving@example.com",
  );
});
