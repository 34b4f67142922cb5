/**
 * What an outside tester found attacking the API keys and the operator's
 * console with only the running app and the docs (issue 28's review):
 * the console told itself apart by a 415, writes of an impersonation
 * refused before their route went unrecorded, ending an impersonation left
 * a session minted inside it, a sign-out kept the operator's parked
 * session, an API key ended an impersonation with the wrong answer, and key
 * names took invisible and direction-changing characters.
 */
import assert from "node:assert/strict";
import {
  api,
  bearer,
  Browser,
  registerJson,
  startApp,
  type TestApp,
  verifyDirectly,
} from "./_harness.ts";

const PASSWORD = "correct horse battery";
const OPS = "ops@example.com";
const ENV = {
  TOTP: "off",
  PASSKEYS: "off",
  MAGIC_LINK: "on",
  OPERATORS: OPS,
};

function start() {
  return startApp({}, { signInEnv: ENV });
}

async function verifiedUser(app: TestApp, email: string) {
  const r = await registerJson(app.origin, email, PASSWORD);
  await verifyDirectly(app, email);
  return r;
}

/** The operator's browser, acting as helped@example.com. */
async function impersonating(app: TestApp) {
  await verifiedUser(app, OPS);
  const b = new Browser(app.origin);
  assert.equal(
    (await b.post("/login", { email: OPS, password: PASSWORD })).status,
    303,
  );
  assert.equal(
    (await b.post("/console/confirm", { password: PASSWORD })).status,
    303,
  );
  const user = await verifiedUser(app, "helped@example.com");
  const started = await b.post(
    `/console/users/${user.subject}/impersonate`,
    {},
  );
  assert.equal(started.status, 303, await started.text());
  return { b, user };
}

Deno.test("F1: a non-form body on a path no route has answers 404, as every console path does to a non-operator: the 415 no longer tells the console apart", async () => {
  await using app = await start();
  for (const path of ["/console", "/console/users/x/ban", "/nonexistent"]) {
    for (const method of ["POST", "PUT", "PATCH"]) {
      const res = await fetch(new URL(path, app.origin), {
        method,
        headers: {
          "content-type": "text/plain",
          accept: "application/json",
          "sec-fetch-site": "same-origin",
        },
        body: "x",
      });
      assert.equal(res.status, 404, `${method} ${path}`);
      assert.equal((await res.json()).error, "not_found");
    }
  }
  // A path a route takes still answers 415 to such a body.
  const login = await fetch(new URL("/login", app.origin), {
    method: "POST",
    headers: { "content-type": "text/plain", "sec-fetch-site": "same-origin" },
    body: "x",
  });
  assert.equal(login.status, 415);
  await login.body?.cancel();
});

Deno.test("F2: writes of an impersonation refused before their route (a body over the cap, a cross-origin post, a console path) are recorded on both sides", async () => {
  await using app = await start();
  const { b, user } = await impersonating(app);
  const ops = (await app.credentials.findByEmail(OPS))!.id;
  const attempts: [string, RequestInit, number][] = [
    ["/api/notes", {
      method: "POST",
      headers: {
        "content-type": "application/json",
        "sec-fetch-site": "same-origin",
      },
      body: JSON.stringify({ text: "x".repeat(70_000) }),
    }, 413],
    ["/api/notes", {
      method: "POST",
      headers: {
        "content-type": "application/json",
        "sec-fetch-site": "cross-site",
      },
      body: "{}",
    }, 403],
    [`/console/users/${user.subject}/ban`, {
      method: "POST",
      headers: {
        "content-type": "application/json",
        "sec-fetch-site": "same-origin",
      },
      body: JSON.stringify({ reason: "from inside" }),
    }, 404],
  ];
  for (const [path, init, status] of attempts) {
    const res = await b.fetch(path, {
      ...init,
      headers: { accept: "application/json", ...init.headers },
    });
    assert.equal(res.status, status, path);
    await res.body?.cancel();
  }
  const rows = await app.query(
    "SELECT subject, actor, detail FROM auth_events WHERE type = 'operator_acted' ORDER BY at",
  );
  const seen = (who: string) =>
    rows.filter((r) => r.subject === who).map((r) => String(r.detail));
  for (const [path, , status] of attempts) {
    const what = `POST ${path} → ${status}`;
    assert.ok(seen(user.subject).includes(what), `user side: ${what}`);
    assert.ok(
      seen(ops).includes(`as helped@example.com: ${what}`),
      `operator side: ${what}`,
    );
  }
  for (const r of rows.filter((r) => r.subject === user.subject)) {
    assert.equal(r.actor, ops);
  }
});

Deno.test("F3: ending an impersonation revokes the sessions minted inside it (a sign-in with the user's password keeps the actor)", async () => {
  await using app = await start();
  const { b } = await impersonating(app);
  // A JSON sign-in as the user from inside the impersonation.
  const inside = await b.fetch("/login", {
    method: "POST",
    headers: {
      "content-type": "application/json",
      accept: "application/json",
      "sec-fetch-site": "same-origin",
    },
    body: JSON.stringify({ email: "helped@example.com", password: PASSWORD }),
  });
  assert.equal(inside.status, 200);
  const minted = (await inside.json()).token as string;
  const me = await api(app.origin, "GET", "/api/me", undefined, bearer(minted));
  assert.equal(me.status, 200);
  assert.ok(me.body.actor, "the minted session keeps the actor");
  assert.equal((await b.post("/impersonation/end", {})).status, 303);
  assert.equal(
    (await api(app.origin, "GET", "/api/me", undefined, bearer(minted)))
      .status,
    401,
  );
});

Deno.test("F4: a sign-out during or after an impersonation drops the operator's parked session; its cookie lives no longer than the impersonation and a grace", async () => {
  await using app = await start();
  const { b } = await impersonating(app);
  const parked = [...b.cookies.entries()].find(([k]) => k.endsWith("operator"));
  assert.ok(parked, "the operator's session waits aside");
  const out = await b.post("/logout", {});
  assert.equal(out.status, 303);
  assert.ok(
    ![...b.cookies.keys()].some((k) => k.endsWith("operator")),
    "the parked cookie is cleared",
  );
  // The next page does not bring the operator back, and the parked token
  // itself is dead.
  const login = await b.page("/login");
  assert.equal(login.status, 200);
  assert.equal((await b.page("/console/users")).status, 404);
  assert.equal(
    (await api(app.origin, "GET", "/api/me", undefined, bearer(parked[1])))
      .status,
    401,
  );
});

Deno.test("F4: the parked cookie's Max-Age is the impersonation's length plus ten minutes at most", async () => {
  await using app = await start();
  await verifiedUser(app, OPS);
  const b = new Browser(app.origin);
  await b.post("/login", { email: OPS, password: PASSWORD });
  await b.post("/console/confirm", { password: PASSWORD });
  const user = await verifiedUser(app, "helped@example.com");
  const started = await b.fetch(
    `/console/users/${user.subject}/impersonate`,
    {
      method: "POST",
      headers: {
        "content-type": "application/x-www-form-urlencoded",
        "sec-fetch-site": "same-origin",
      },
      body: "",
      redirect: "manual",
    },
  );
  const cookie = started.headers.getSetCookie().find((c) =>
    /^(__Host-)?operator=/.test(c)
  );
  assert.ok(cookie, started.headers.getSetCookie().join("\n"));
  const maxAge = Number(/max-age=(\d+)/i.exec(cookie)?.[1]);
  assert.ok(maxAge > 0 && maxAge <= 15 * 60 + 600, cookie);
});

Deno.test("I2: an API key ending an impersonation gets 403 api_key_refused, as on every signed-in route", async () => {
  await using app = await start();
  await verifiedUser(app, "keys@example.com");
  const login = await api(app.origin, "POST", "/login", {
    email: "keys@example.com",
    password: PASSWORD,
  });
  const made = await api(app.origin, "POST", "/api/keys", {
    name: "ci",
    scopes: ["notes:view"],
    password: PASSWORD,
  }, bearer(login.body.token));
  assert.equal(made.status, 201, JSON.stringify(made.body));
  const res = await api(
    app.origin,
    "POST",
    "/impersonation/end",
    {},
    bearer(made.body.key ?? made.body.token),
  );
  assert.equal(res.status, 403);
  assert.equal(res.body.error, "api_key_refused");
});

Deno.test("I3: a key name with invisible or direction-changing characters is refused 422 and nothing is stored; the event quotes a name as JSON", async () => {
  await using app = await start();
  await verifiedUser(app, "names@example.com");
  const login = await api(app.origin, "POST", "/login", {
    email: "names@example.com",
    password: PASSWORD,
  });
  const tries: [Record<string, unknown>, string][] = [
    [{ name: "ci\u202Etxt.exe", scopes: ["notes:view"] }, "invalid_name"],
    [{ name: "c\u200Bi", scopes: ["notes:view"] }, "invalid_name"],
    [{ name: "\u2066ci\u2069", scopes: ["notes:view"] }, "invalid_name"],
    [{ name: "ci", scopes: ["notes:*"] }, "invalid_scopes"],
  ];
  for (const [body, error] of tries) {
    const res = await api(app.origin, "POST", "/api/keys", {
      ...body,
      password: PASSWORD,
    }, bearer(login.body.token));
    assert.equal(res.status, 422, JSON.stringify(body));
    assert.equal(res.body.error, error, JSON.stringify(body));
  }
  assert.equal((await app.query("SELECT * FROM api_keys")).length, 0);
  // A name with quotes is recorded quoted, so it cannot pose as another
  // detail.
  const quoted = await api(app.origin, "POST", "/api/keys", {
    name: 'ci" revoked "x',
    scopes: ["notes:view"],
    password: PASSWORD,
  }, bearer(login.body.token));
  assert.equal(quoted.status, 201);
  const [event] = await app.query(
    "SELECT detail FROM auth_events WHERE type = 'api_key_created'",
  );
  assert.match(String(event.detail), / "ci\\" revoked \\"x"$/);
});
