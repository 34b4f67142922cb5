/**
 * API keys on the reference app over HTTP (issue 28; SECURITY.md item 61):
 * created on `/account` and over JSON, shown once, stored only as a hash,
 * listed with creation, last use and expiry, revocable; a key calls the
 * notes API within its scopes and never a credential route; keys in the
 * lifecycle (deletion, password reset, sign out everywhere, a ban); the
 * per-key throttle; "last used" without a write per request.
 */
import assert from "node:assert/strict";
import {
  api,
  bearer,
  Browser,
  EVERY_MODULE,
  registerJson,
  startApp,
  type TestApp,
  verifyDirectly,
} from "./_harness.ts";
import { apiKeys } from "../../packages/accounts/mod.ts";
import { NOTE_ACTIONS } from "../../examples/app/notes.ts";
import { hashApiKey, mintApiKey } from "../../lib/session/mod.ts";

const PASSWORD = "correct horse battery";
const DAY = 86_400_000;

/** A verified user with a session token. */
async function user(app: TestApp, email: string) {
  const { subject, token } = await registerJson(app.origin, email, PASSWORD);
  await verifyDirectly(app, email);
  return { subject, token };
}

async function makeKey(
  app: TestApp,
  token: string,
  body: Record<string, unknown>,
) {
  return await api(app.origin, "POST", "/api/keys", {
    password: PASSWORD,
    ...body,
  }, bearer(token));
}

Deno.test("a key is made over JSON with a name, scopes and an expiry, shown once, stored only as a hash, and listed without its secret", async () => {
  await using app = await startApp();
  const { token, subject } = await user(app, "k@example.com");
  const made = await makeKey(app, token, {
    name: "CI",
    scopes: ["notes:view", "notes:create"],
  });
  assert.equal(made.status, 201);
  assert.equal(made.headers.get("cache-control"), "no-store");
  const key = made.body.key as string;
  assert.match(key, /^pc_[a-z2-7]{16}_[a-z2-7]{59}$/);
  assert.equal(made.body.name, "CI");
  assert.deepEqual(made.body.scopes, ["notes:view", "notes:create"]);
  assert.equal(
    Date.parse(made.body.expiresAt as string) - app.now(),
    30 * DAY,
    "the default lifetime",
  );
  assert.equal(made.body.lastUsedAt, null);
  // The store holds the SHA-256 and the id, never the key.
  const rows = await app.query("SELECT * FROM api_keys");
  assert.equal(rows.length, 1);
  assert.equal(rows[0].user_id, subject);
  assert.equal(rows[0].secret_hash, await hashApiKey(key));
  assert.ok(!JSON.stringify(rows).includes(key.slice(20)));
  // Listed with its times, never its secret.
  const list = await api(
    app.origin,
    "GET",
    "/api/keys",
    undefined,
    bearer(token),
  );
  assert.equal(list.status, 200);
  const [listed] = list.body.keys as Record<string, unknown>[];
  assert.deepEqual(Object.keys(listed).sort(), [
    "createdAt",
    "expired",
    "expiresAt",
    "id",
    "lastUsedAt",
    "name",
    "scopes",
  ]);
  assert.ok(!JSON.stringify(list.body).includes(key));
  // The key works: who am I says it is a key, with its scopes.
  const me = await api(app.origin, "GET", "/api/me", undefined, bearer(key));
  assert.equal(me.status, 200);
  assert.equal(me.body.subject, subject);
  assert.deepEqual(me.body.apiKey, {
    id: made.body.id,
    scopes: ["notes:view", "notes:create"],
  });
});

Deno.test("a key does what its scopes allow on the notes API and nothing more, even where its owner could", async () => {
  await using app = await startApp();
  const { token } = await user(app, "scope@example.com");
  const viewer = (await makeKey(app, token, {
    name: "reader",
    scopes: "notes:view",
  })).body.key as string;
  const writer = (await makeKey(app, token, {
    name: "writer",
    scopes: ["notes:create", "notes:view"],
  })).body.key as string;
  const note = await api(
    app.origin,
    "POST",
    "/api/notes",
    { text: "hi" },
    bearer(writer),
  );
  assert.equal(note.status, 201);
  const id = note.body.id as string;
  // The reader reads, and cannot create or edit (its owner could).
  assert.equal(
    (await api(
      app.origin,
      "GET",
      `/api/notes/${id}`,
      undefined,
      bearer(viewer),
    ))
      .status,
    200,
  );
  const create = await api(
    app.origin,
    "POST",
    "/api/notes",
    { text: "x" },
    bearer(viewer),
  );
  assert.equal(create.status, 403);
  assert.equal(create.body.error, "forbidden");
  const edit = await api(
    app.origin,
    "PUT",
    `/api/notes/${id}`,
    { text: "x" },
    bearer(writer),
  );
  assert.equal(edit.status, 403, "notes:edit is not among the writer's scopes");
  const owner = await api(
    app.origin,
    "PUT",
    `/api/notes/${id}`,
    { text: "y" },
    bearer(token),
  );
  assert.equal(owner.status, 200, "the owner in person may edit");
  // Scopes outside the app's actions are refused at creation.
  const bad = await makeKey(app, token, { name: "x", scopes: ["admin"] });
  assert.equal(bad.status, 422);
  assert.equal(bad.body.error, "invalid_scopes");
});

Deno.test("a key on every credential route of the account is refused 403 api_key_refused, and changes nothing", async () => {
  await using app = await startApp({}, { signInEnv: EVERY_MODULE });
  const { token } = await user(app, "cred@example.com");
  const made = await makeKey(app, token, {
    name: "all",
    scopes: [...NOTE_ACTIONS],
  });
  const key = made.body.key as string;
  const routes: [string, string, unknown?][] = [
    ["POST", "/account/password", {
      currentPassword: PASSWORD,
      newPassword: "another long password",
    }],
    ["POST", "/account/password/link"],
    ["POST", "/account/email", {
      email: "new@example.com",
      password: PASSWORD,
    }],
    ["POST", "/account/delete", { password: PASSWORD }],
    ["POST", "/api/keys", {
      name: "more",
      scopes: "notes:view",
      password: PASSWORD,
    }],
    ["DELETE", `/api/keys/${made.body.id}`],
    ["POST", "/account/keys", { name: "more", password: PASSWORD }],
    ["POST", "/account/keys/revoke", { id: made.body.id }],
    ["GET", "/api/keys"],
    ["POST", "/account/totp", { password: PASSWORD }],
    ["POST", "/account/totp/confirm", { code: "000000" }],
    ["POST", "/account/totp/disable", { password: PASSWORD }],
    ["POST", "/passkeys/register/options", { password: PASSWORD }],
    ["POST", "/passkeys/register", {}],
    ["POST", "/account/passkeys/rename", {}],
    ["POST", "/account/passkeys/delete", {}],
    ["POST", "/account/sessions/revoke-others"],
    ["POST", "/account/sessions/revoke", { id: "x" }],
    ["GET", "/api/sessions"],
    ["GET", "/api/activity"],
    ["POST", "/verify/resend"],
    ["POST", "/logout"],
  ];
  for (const [method, path, body] of routes) {
    const res = await api(app.origin, method, path, body, bearer(key));
    assert.equal(
      res.status,
      403,
      `${method} ${path}: ${JSON.stringify(res.body)}`,
    );
    assert.equal(res.body.error, "api_key_refused", `${method} ${path}`);
  }
  // The account page is a person's.
  const page = await fetch(new URL("/account", app.origin), {
    headers: { ...bearer(key), accept: "text/html" },
  });
  await page.body?.cancel();
  assert.equal(page.status, 403);
  // Nothing changed: the password, the address, the key and the account.
  const login = await api(app.origin, "POST", "/login", {
    email: "cred@example.com",
    password: PASSWORD,
  });
  assert.equal(login.status, 200);
  assert.equal(
    (await api(app.origin, "GET", "/api/me", undefined, bearer(key))).status,
    200,
  );
  assert.equal((await app.query("SELECT * FROM api_keys")).length, 1);
});

Deno.test("a forged key, a revoked key and an expired key answer 401 invalid_token", async () => {
  await using app = await startApp();
  const { token } = await user(app, "f@example.com");
  const made = await makeKey(app, token, {
    name: "x",
    scopes: "notes:view",
    expiresInDays: 2,
  });
  const key = made.body.key as string;
  // Forged: well formed, never issued; and the real id with another secret.
  const forged = (await mintApiKey()).key;
  for (
    const k of [forged, `pc_${made.body.id}_${forged.slice(20)}`, key + "x"]
  ) {
    const res = await api(app.origin, "GET", "/api/me", undefined, bearer(k));
    assert.equal(res.status, 401, k);
    assert.match(res.headers.get("www-authenticate")!, /invalid_token/);
  }
  // Expired after its two days.
  app.advance(2 * DAY - 1000);
  assert.equal(
    (await api(app.origin, "GET", "/api/me", undefined, bearer(key))).status,
    200,
  );
  app.advance(1000);
  assert.equal(
    (await api(app.origin, "GET", "/api/me", undefined, bearer(key))).status,
    401,
  );
  const listed = await api(
    app.origin,
    "GET",
    "/api/keys",
    undefined,
    bearer(token),
  );
  assert.equal((listed.body.keys as { expired: boolean }[])[0].expired, true);
  // Revoked.
  const other = await makeKey(app, token, { name: "y", scopes: "notes:view" });
  const del = await api(
    app.origin,
    "DELETE",
    `/api/keys/${other.body.id}`,
    undefined,
    bearer(token),
  );
  assert.equal(del.status, 204);
  assert.equal(
    (await api(app.origin, "GET", "/api/me", undefined, bearer(other.body.key)))
      .status,
    401,
  );
  // Another user's key id is not found.
  const { token: t2 } = await user(app, "g@example.com");
  const stranger = await makeKey(app, t2, { name: "z", scopes: "notes:view" });
  assert.equal(
    (await api(
      app.origin,
      "DELETE",
      `/api/keys/${stranger.body.id}`,
      undefined,
      bearer(token),
    )).status,
    404,
  );
});

Deno.test("creating a key needs the password (a session alone does not), a verified address, a lifetime within the app's maximum and room for it", async () => {
  await using app = await startApp();
  const { token } = await registerJson(app.origin, "u@example.com", PASSWORD);
  const unverified = await makeKey(app, token, {
    name: "x",
    scopes: "notes:view",
  });
  assert.equal(unverified.status, 403);
  assert.equal(unverified.body.error, "unverified");
  await verifyDirectly(app, "u@example.com");
  const noPassword = await api(app.origin, "POST", "/api/keys", {
    name: "x",
    scopes: "notes:view",
  }, bearer(token));
  assert.equal(noPassword.status, 401);
  const wrong = await makeKey(app, token, {
    name: "x",
    password: "wrong wrong wrong",
  });
  assert.equal(wrong.status, 401);
  for (
    const [days, code] of [
      [366, "invalid_expiry"],
      [0, "invalid_expiry"],
      [
        "soon",
        "invalid_expiry",
      ],
      [1.5, "invalid_expiry"],
      ["0030", "invalid_expiry"],
      [
        " 30",
        "invalid_expiry",
      ],
    ] as const
  ) {
    const res = await makeKey(app, token, { name: "x", expiresInDays: days });
    assert.equal(res.status, 422, String(days));
    assert.equal(res.body.error, code);
  }
  for (const name of ["", " ", "x".repeat(101), "a\u0000b"]) {
    const res = await makeKey(app, token, { name });
    assert.equal(res.status, 422, JSON.stringify(name));
    assert.equal(res.body.error, "invalid_name");
  }
  const longest = await makeKey(app, token, { name: "x", expiresInDays: 365 });
  assert.equal(longest.status, 201);
  assert.equal((await app.query("SELECT * FROM api_keys")).length, 1);
});

Deno.test("the account page makes a key without JavaScript, shows it once, lists it, and revokes it", async () => {
  await using app = await startApp();
  await user(app, "page@example.com");
  const browser = new Browser(app.origin);
  await browser.post("/login", {
    email: "page@example.com",
    password: PASSWORD,
  });
  const account = await browser.page("/account");
  assert.match(account.body, /id="api-keys"/);
  assert.match(account.body, /name="scope:notes:view"/);
  const made = await browser.post("/account/keys", {
    name: "Laptop script",
    expiresInDays: "7",
    "scope:notes:view": "on",
    password: PASSWORD,
  });
  assert.equal(made.status, 201);
  assert.equal(made.headers.get("cache-control"), "no-store");
  const body = await made.text();
  const key = /id="new-key"[^>]*>([^<]+)</.exec(body)?.[1];
  assert.ok(key && /^pc_/.test(key), body);
  const again = await browser.page("/account");
  assert.match(again.body, /Laptop script/);
  assert.ok(!again.body.includes(key), "the secret is shown once");
  const id = /name="id" value="([a-z2-7]{16})"/.exec(again.body)?.[1];
  assert.ok(id);
  const revoked = await browser.post("/account/keys/revoke", { id });
  assert.equal(revoked.status, 303);
  assert.equal(
    (await api(app.origin, "GET", "/api/me", undefined, bearer(key))).status,
    401,
  );
  // A cross-site form cannot make a key.
  const forged = await browser.post("/account/keys", {
    name: "evil",
    password: PASSWORD,
  }, { "sec-fetch-site": "cross-site" });
  assert.equal(forged.status, 403);
  assert.equal((await app.query("SELECT * FROM api_keys")).length, 0);
});

Deno.test("keys in the lifecycle: sign out everywhere and a password change keep them; a password reset and the deletion revoke them", async () => {
  await using app = await startApp();
  const { token } = await user(app, "life@example.com");
  const key = (await makeKey(app, token, { name: "x", scopes: "notes:view" }))
    .body.key as string;
  const works = async () =>
    (await api(app.origin, "GET", "/api/me", undefined, bearer(key))).status;
  const everywhere = await api(
    app.origin,
    "POST",
    "/account/sessions/revoke-others",
    undefined,
    bearer(token),
  );
  assert.equal(everywhere.status, 200);
  assert.equal(await works(), 200, "sign out everywhere keeps keys");
  const changed = await api(app.origin, "POST", "/account/password", {
    currentPassword: PASSWORD,
    newPassword: "a brand new password",
  }, bearer(everywhere.body.token));
  assert.equal(changed.status, 200);
  assert.equal(await works(), 200, "a password change keeps keys");
  // A reset: the recovery path after a takeover.
  await api(app.origin, "POST", "/password/forgot", {
    email: "life@example.com",
  });
  const link = new URL(await app.awaitLink("life@example.com", 2));
  const reset = await api(app.origin, "POST", "/password/reset", {
    token: link.searchParams.get("token"),
    password: "the password after reset",
  });
  assert.equal(reset.status, 200);
  assert.equal(await works(), 401, "a password reset revokes keys");
  const activity = await app.query(
    "SELECT type, detail FROM auth_events WHERE type = 'api_key_revoked'",
  );
  assert.match(String(activity[0].detail), /password reset: 1 key/);
  // Deletion.
  const login = await api(app.origin, "POST", "/login", {
    email: "life@example.com",
    password: "the password after reset",
  });
  const again = (await makeKey(app, login.body.token as string, {
    name: "y",
    password: "the password after reset",
  })).body.key as string;
  const gone = await api(app.origin, "POST", "/account/delete", {
    password: "the password after reset",
  }, bearer(login.body.token));
  assert.equal(gone.status, 204);
  assert.equal(
    (await api(app.origin, "GET", "/api/me", undefined, bearer(again))).status,
    401,
  );
  assert.equal((await app.query("SELECT * FROM api_keys")).length, 0);
});

Deno.test("a key of a banned account stops at once and comes back when the ban is lifted", async () => {
  await using app = await startApp();
  const { token, subject } = await user(app, "ban@example.com");
  const key = (await makeKey(app, token, { name: "x", scopes: "notes:view" }))
    .body.key as string;
  await app.query(
    `INSERT INTO account_bans (user_id, reason, banned_by, banned_at) VALUES ('${subject}', 'spam', 'op', 1)`,
  );
  assert.equal(
    (await api(app.origin, "GET", "/api/me", undefined, bearer(key))).status,
    401,
  );
  await app.query(`DELETE FROM account_bans WHERE user_id = '${subject}'`);
  assert.equal(
    (await api(app.origin, "GET", "/api/me", undefined, bearer(key))).status,
    200,
  );
});

Deno.test("last use is recorded to the minute, without a store write per request", async () => {
  await using app = await startApp();
  const { token } = await user(app, "used@example.com");
  const made = await makeKey(app, token, { name: "x", scopes: "notes:view" });
  const key = made.body.key as string;
  const lastUsed = async () =>
    ((await api(app.origin, "GET", "/api/keys", undefined, bearer(token))).body
      .keys as { lastUsedAt: string | null }[])[0].lastUsedAt;
  assert.equal(await lastUsed(), null);
  const first = app.now();
  for (let i = 0; i < 20; i++) {
    await api(app.origin, "GET", "/api/me", undefined, bearer(key));
    app.advance(1000);
  }
  // Written once, off the request's path: give it a moment.
  for (let i = 0; i < 50 && (await lastUsed()) === null; i++) {
    await new Promise((r) => setTimeout(r, 10));
  }
  assert.equal(await lastUsed(), new Date(first).toISOString());
  app.advance(60_000);
  await api(app.origin, "GET", "/api/me", undefined, bearer(key));
  for (
    let i = 0;
    i < 50 && (await lastUsed()) === new Date(first).toISOString();
    i++
  ) await new Promise((r) => setTimeout(r, 10));
  assert.equal(await lastUsed(), new Date(app.now()).toISOString());
});

Deno.test("each key's requests go through the throttle: past its limit, 429 with Retry-After, and other keys are untouched", async () => {
  await using app = await startApp({}, {
    wrapModules: (list) =>
      list.map((m) =>
        m.name === "api_keys"
          ? apiKeys({
            scopes: NOTE_ACTIONS,
            requestLimit: { max: 3, windowSeconds: 60 },
          })
          : m
      ),
  });
  const { token } = await user(app, "rate@example.com");
  const a =
    (await makeKey(app, token, { name: "a", scopes: "notes:view" })).body.key;
  const b =
    (await makeKey(app, token, { name: "b", scopes: "notes:view" })).body.key;
  for (let i = 0; i < 3; i++) {
    assert.equal(
      (await api(app.origin, "GET", "/api/me", undefined, bearer(a))).status,
      200,
    );
  }
  const limited = await api(app.origin, "GET", "/api/me", undefined, bearer(a));
  assert.equal(limited.status, 429);
  assert.ok(Number(limited.headers.get("retry-after")) > 0);
  assert.equal(
    (await api(app.origin, "GET", "/api/me", undefined, bearer(b))).status,
    200,
  );
  // The owner's session is not a key: not counted.
  assert.equal(
    (await api(app.origin, "GET", "/api/me", undefined, bearer(token))).status,
    200,
  );
  // The window slides: two windows on, the key works again.
  app.advance(121_000);
  assert.equal(
    (await api(app.origin, "GET", "/api/me", undefined, bearer(a))).status,
    200,
  );
});
