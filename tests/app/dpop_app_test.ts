/**
 * DPoP (RFC 9449) in the reference app, over real HTTP: a JSON sign-in
 * with a proof gets a token bound to the proof's key, which works only as
 * `Authorization: DPoP` with a fresh proof by that key. The resource
 * requests are made by a DPoP client nobody here wrote (oauth4webapi,
 * which retries on `use_dpop_nonce`); the sign-ins and the bad proofs are
 * made by hand (`tests/session/_dpop_proofs.ts`), since oauth4webapi makes
 * proofs only for OAuth endpoints and protected resources. No token is
 * ever printed.
 *
 * @module
 */
import assert from "node:assert/strict";
import {
  api,
  bearer,
  Browser,
  registerJson,
  startApp,
  verifyDirectly,
} from "./_harness.ts";
import { ath, es256Key, makeProof } from "../session/_dpop_proofs.ts";
import { modules } from "../../examples/app/modules.ts";
import {
  dpopClient,
  dpopLogin,
  loginWithProof,
  nonceOf,
  PASSWORD,
  proof,
  seconds,
  status,
} from "./_dpop_client.ts";

Deno.test("DPoP sign-in: the nonce dance, then a bound token that works with its key only, listed as bound", async () => {
  await using app = await startApp();
  const { token: plain } = await registerJson(
    app.origin,
    "d@example.com",
    PASSWORD,
  );
  app.advance(1000); // the DPoP session is the newer one
  const key = await es256Key();

  // A proof without the nonce: 401 use_dpop_nonce, the nonce in a header,
  // and no session begun (the password is not even checked).
  const first = await loginWithProof(app, key, "d@example.com");
  assert.equal(first.status, 401);
  assert.match(
    first.headers.get("www-authenticate") ?? "",
    /^DPoP error="use_dpop_nonce"/,
  );
  assert.equal(first.body.error, "use_dpop_nonce");
  const nonce = first.headers.get("dpop-nonce")!;
  assert.ok(nonce);
  const listed = async () =>
    (await api(app.origin, "GET", "/api/sessions", undefined, bearer(plain)))
      .body.sessions as { bound: boolean; current: boolean }[];
  assert.equal((await listed()).length, 1);

  // With the nonce: a token, and no cookie (a bound token is never one).
  const signedIn = await loginWithProof(app, key, "d@example.com", nonce);
  assert.equal(signedIn.status, 200);
  assert.equal(signedIn.headers.get("set-cookie"), null);
  const token = signedIn.body.token as string;
  assert.equal(typeof token, "string");
  assert.equal(signedIn.body.tokenType, "DPoP");
  assert.equal(typeof signedIn.body.expiresAt, "number");

  // The real client: its first request meets the nonce, retries, and
  // then keeps it.
  const owner = dpopClient(app, key);
  const me = await owner.request(token, "GET", "/api/me");
  assert.equal(me.status, 200);
  assert.equal((await me.json()).email, "d@example.com");
  assert.equal(owner.state.retries, 1);
  for (let i = 0; i < 3; i++) {
    assert.equal(
      await status(await owner.request(token, "GET", "/api/me")),
      200,
    );
  }
  assert.equal(owner.state.retries, 1);

  // "My sessions": the DPoP one is bound and current, the first one not.
  const sessions = await owner.request(token, "GET", "/api/sessions");
  assert.equal(sessions.status, 200);
  const list = (await sessions.json()).sessions as {
    bound: boolean;
    current: boolean;
  }[];
  assert.equal(list.length, 2);
  assert.deepEqual(
    list.map((s) => [s.current, s.bound]),
    [[true, true], [false, false]],
  );

  // The stolen token: as Bearer, under DPoP without a proof, and with
  // another key's proofs (a real client too): 401 each time.
  const asBearer = await api(
    app.origin,
    "GET",
    "/api/me",
    undefined,
    bearer(token),
  );
  assert.equal(asBearer.status, 401);
  // Issue 27 docs item 2 (RFC 9449 §7.2): the error with the scheme used,
  // and a DPoP challenge beside it.
  assert.match(
    asBearer.headers.get("www-authenticate") ?? "",
    /^Bearer realm="portcullis", error="invalid_token", DPoP algs="[A-Za-z0-9 ]+"$/,
  );
  const bare = await api(app.origin, "GET", "/api/me", undefined, {
    authorization: `DPoP ${token}`,
  });
  assert.equal(bare.status, 401);
  assert.match(
    bare.headers.get("www-authenticate") ?? "",
    /^DPoP error="invalid_dpop_proof"/,
  );
  const thief = dpopClient(app, await es256Key());
  const stolen = await thief.request(token, "GET", "/api/me");
  assert.equal(stolen.status, 401);
  assert.match(
    stolen.headers.get("www-authenticate") ?? "",
    /^DPoP error="invalid_token"/,
  );
  await stolen.body?.cancel();
  // Browsers and plain Bearer clients are answered as before.
  const plainMe = await api(
    app.origin,
    "GET",
    "/api/me",
    undefined,
    bearer(plain),
  );
  assert.equal(plainMe.status, 200);
  assert.equal(plainMe.body.email, "d@example.com");
});

Deno.test("DPoP: a replayed proof, a proof for another URL or method, a stale one, a bad signature: 401 invalid_dpop_proof; a form with a proof: 400; nothing changes", async () => {
  await using app = await startApp();
  const { token: plain } = await registerJson(
    app.origin,
    "r@example.com",
    PASSWORD,
  );
  const key = await es256Key();
  const { token } = await dpopLogin(app, key, "r@example.com");
  const nonce = await nonceOf(app, key);
  const once = await proof(app, key, "GET", "/api/me", { nonce, token });
  const send = (dpop: string, path = "/api/me") =>
    api(app.origin, "GET", path, undefined, {
      authorization: `DPoP ${token}`,
      dpop,
    });
  assert.equal((await send(once)).status, 200);
  const refused = async (
    res: Promise<{ status: number; headers: Headers }>,
  ) => {
    const r = await res;
    assert.equal(r.status, 401);
    assert.match(
      r.headers.get("www-authenticate") ?? "",
      /^DPoP error="invalid_dpop_proof"/,
    );
  };
  await refused(send(once)); // the same proof again
  await refused(
    send(await proof(app, key, "GET", "/api/sessions", { nonce, token })),
  );
  await refused(
    send(await proof(app, key, "POST", "/api/me", { nonce, token })),
  );
  await refused(
    send(
      await proof(app, key, "GET", "/api/me", {
        nonce,
        token,
        iat: seconds(app) - 600,
      }),
    ),
  );
  await refused(
    send(
      await proof(app, key, "GET", "/api/me", { nonce, token: plain }),
    ),
  );
  const corrupt = await makeProof(key, {
    jti: crypto.randomUUID(),
    htm: "GET",
    htu: `${app.origin}/api/me`,
    iat: seconds(app),
    nonce,
    ath: await ath(token),
  }, { corrupt: true });
  await refused(send(corrupt));
  // A sign-in with a bad proof: refused before the password is checked,
  // no session begun.
  const before = (await api(
    app.origin,
    "GET",
    "/api/sessions",
    undefined,
    bearer(plain),
  )).body.sessions as unknown[];
  await refused(
    api(app.origin, "POST", "/login", {
      email: "r@example.com",
      password: PASSWORD,
    }, { dpop: await proof(app, key, "POST", "/register", { nonce }) }),
  );
  // A form's sign-in with a good proof: a form's answer (a redirect and a
  // cookie) has no place for a bound token, so 400 and no session.
  const form = await fetch(`${app.origin}/login`, {
    method: "POST",
    redirect: "manual",
    headers: {
      "content-type": "application/x-www-form-urlencoded",
      accept: "application/json",
      dpop: await proof(app, key, "POST", "/login", { nonce }),
    },
    body: new URLSearchParams({ email: "r@example.com", password: PASSWORD }),
  });
  assert.equal(form.status, 400);
  assert.equal((await form.json()).error, "dpop_needs_json");
  assert.equal(form.headers.get("set-cookie"), null);
  const after = (await api(
    app.origin,
    "GET",
    "/api/sessions",
    undefined,
    bearer(plain),
  )).body.sessions as unknown[];
  assert.equal(after.length, before.length);
});

Deno.test("DPoP: every Bearer route of the app works over DPoP, and the tokens it mints again stay bound to the same key", async () => {
  await using app = await startApp();
  await registerJson(app.origin, "b@example.com", PASSWORD);
  await verifyDirectly(app, "b@example.com");
  const key = await es256Key();
  const { token } = await dpopLogin(app, key, "b@example.com");
  const owner = dpopClient(app, key);
  const thief = dpopClient(app, await es256Key());

  // Notes: create, read, edit.
  const created = await owner.request(token, "POST", "/api/notes", {
    text: "first",
  });
  assert.equal(created.status, 201);
  const { id } = await created.json();
  const read = await owner.request(token, "GET", `/api/notes/${id}`);
  assert.equal(read.status, 200);
  assert.equal((await read.json()).text, "first");
  assert.equal(
    await status(
      await owner.request(token, "PUT", `/api/notes/${id}`, { text: "second" }),
    ),
    200,
  );
  const activity = await owner.request(token, "GET", "/api/activity");
  assert.equal(activity.status, 200);
  assert.ok(
    ((await activity.json()).events as { type: string }[]).some((e) =>
      e.type === "login"
    ),
  );

  // Another session of the same user, revoked over DPoP.
  const other = (await api(app.origin, "POST", "/login", {
    email: "b@example.com",
    password: PASSWORD,
  })).body.token as string;
  const list = async (t: string) =>
    (await (await owner.request(t, "GET", "/api/sessions")).json())
      .sessions as { id: string; current: boolean; bound: boolean }[];
  const otherId = ((await api(
    app.origin,
    "GET",
    "/api/sessions",
    undefined,
    bearer(other),
  )).body.sessions as { id: string; current: boolean }[])
    .find((s) => s.current)!.id;
  assert.ok((await list(token)).some((s) => s.id === otherId));
  assert.equal(
    await status(
      await owner.request(token, "DELETE", `/api/sessions/${otherId}`),
    ),
    204,
  );
  assert.equal(
    (await api(app.origin, "GET", "/api/me", undefined, bearer(other))).status,
    401,
  );

  // "Sign out everywhere else" over DPoP: the new token is bound to the
  // same key (never a plain Bearer token), the old one is dead.
  const revoked = await owner.request(
    token,
    "POST",
    "/account/sessions/revoke-others",
  );
  assert.equal(revoked.status, 200);
  assert.equal(revoked.headers.get("set-cookie"), null);
  const again = await revoked.json();
  assert.equal(again.tokenType, "DPoP");
  const renewed = again.token as string;
  assert.notEqual(renewed, token);
  assert.equal(await status(await owner.request(token, "GET", "/api/me")), 401);
  assert.equal(
    await status(await owner.request(renewed, "GET", "/api/me")),
    200,
  );
  assert.equal(
    (await api(app.origin, "GET", "/api/me", undefined, bearer(renewed)))
      .status,
    401,
  );
  assert.equal(
    await status(await thief.request(renewed, "GET", "/api/me")),
    401,
  );
  assert.deepEqual(
    (await list(renewed)).map((s) => [s.current, s.bound]),
    [[true, true]],
  );

  // A password change over DPoP: the same, bound to the same key.
  const changed = await owner.request(renewed, "POST", "/account/password", {
    currentPassword: PASSWORD,
    newPassword: "another horse battery staple",
  });
  assert.equal(changed.status, 200);
  const third = (await changed.json()).token as string;
  assert.equal(
    (await api(app.origin, "GET", "/api/me", undefined, bearer(third))).status,
    401,
  );
  assert.equal(await status(await owner.request(third, "GET", "/api/me")), 200);
  assert.equal(await status(await thief.request(third, "GET", "/api/me")), 401);

  // Sign-out over DPoP: 204, and the token is dead.
  assert.equal(
    await status(await owner.request(third, "POST", "/logout")),
    204,
  );
  assert.equal(await status(await owner.request(third, "GET", "/api/me")), 401);
});

Deno.test("DPoP: a registration with a proof gets a bound token, DPOP=off ignores proofs, a typo stops the start", async () => {
  {
    await using app = await startApp();
    const key = await es256Key();
    const nonce = await nonceOf(app, key);
    const res = await api(app.origin, "POST", "/register", {
      email: "n@example.com",
      password: PASSWORD,
    }, { dpop: await proof(app, key, "POST", "/register", { nonce }) });
    assert.equal(res.status, 201);
    const token = res.body.token as string;
    assert.equal(
      (await api(app.origin, "GET", "/api/me", undefined, bearer(token)))
        .status,
      401,
    );
    const owner = dpopClient(app, key);
    assert.equal(
      await status(await owner.request(token, "GET", "/api/me")),
      200,
    );
  }
  {
    await using app = await startApp({}, {
      signInEnv: { TOTP: "off", PASSKEYS: "off", DPOP: "off" },
    });
    await registerJson(app.origin, "o@example.com", PASSWORD);
    const key = await es256Key();
    // No nonce asked for, and the token is a plain Bearer one.
    const res = await loginWithProof(app, key, "o@example.com");
    assert.equal(res.status, 200);
    assert.equal(res.body.tokenType, "Bearer");
    assert.equal(
      (await api(
        app.origin,
        "GET",
        "/api/me",
        undefined,
        bearer(res.body.token),
      ))
        .status,
      200,
    );
  }
  // The project's configuration reads the switch.
  const named = (DPOP: string) => modules({ DPOP }).map((m) => m.name);
  assert.ok(!named("Off").includes("dpop"));
  assert.ok(named(" yes ").includes("dpop"));
  assert.throws(() => named("maybe"), (err: Error) => {
    assert.ok(err instanceof TypeError);
    assert.match(err.message, /^DPOP must be one of/);
    return true;
  });
});

Deno.test("DPoP: the account's JSON routes (resend the link, change the address, delete the account) work over DPoP; a thief's key changes nothing", async () => {
  await using app = await startApp();
  await registerJson(app.origin, "c@example.com", PASSWORD);
  const key = await es256Key();
  const { token } = await dpopLogin(app, key, "c@example.com");
  const owner = dpopClient(app, key);
  const thief = dpopClient(app, await es256Key());
  const mails = () => app.mail.length;

  const before = mails();
  const stolenResend = await thief.request(token, "POST", "/verify/resend");
  assert.equal(await status(stolenResend), 401);
  assert.equal(mails(), before);
  assert.equal(
    await status(await owner.request(token, "POST", "/verify/resend")),
    204,
  );
  await app.awaitLink("c@example.com", 2);

  const stolenChange = await thief.request(token, "POST", "/account/email", {
    email: "thief@example.com",
    password: PASSWORD,
  });
  assert.equal(await status(stolenChange), 401);
  const changed = await owner.request(token, "POST", "/account/email", {
    email: "c2@example.com",
    password: PASSWORD,
  });
  assert.equal(await status(changed), 202);
  await app.awaitLink("c2@example.com");
  assert.ok(!app.mail.some((l) => l.includes("thief@example.com")));

  const stolenDelete = await thief.request(token, "POST", "/account/delete", {
    password: PASSWORD,
  });
  assert.equal(await status(stolenDelete), 401);
  assert.ok((await app.credentials.findByEmail("c@example.com")) !== null);
  const deleted = await owner.request(token, "POST", "/account/delete", {
    password: PASSWORD,
  });
  assert.equal(await status(deleted), 204);
  assert.equal(await app.credentials.findByEmail("c@example.com"), null);
  assert.equal(await status(await owner.request(token, "GET", "/api/me")), 401);
});

Deno.test("DPoP: a browser's cookie session with a DPoP header stays a cookie session: sign out everywhere else and a password change set the new cookie, no bound session is left over", async () => {
  await using app = await startApp();
  await registerJson(app.origin, "k@example.com", PASSWORD);
  const browser = new Browser(app.origin);
  const login = await browser.post("/login", {
    email: "k@example.com",
    password: PASSWORD,
  });
  assert.equal(login.status, 303);
  await login.body?.cancel();
  const first = browser.cookies.get("__Host-session");
  assert.ok(first, "a session cookie");
  const key = await es256Key();
  const nonce = await nonceOf(app, key);
  const withProof = async (path: string, body: unknown) =>
    await browser.fetch(path, {
      method: "POST",
      headers: {
        accept: "application/json",
        "content-type": "application/json",
        "sec-fetch-site": "same-origin",
        origin: app.origin,
        dpop: await proof(app, key, "POST", path, { nonce }),
      },
      body: JSON.stringify(body),
    });

  const others = await withProof("/account/sessions/revoke-others", {});
  assert.equal(others.status, 303);
  assert.equal(others.headers.get("location"), "/account");
  await others.body?.cancel();
  const second = browser.cookies.get("__Host-session");
  assert.ok(second && second !== first, "the new cookie");
  const me = await browser.fetch("/api/me", {
    headers: { accept: "application/json" },
  });
  assert.equal(me.status, 200);
  await me.body?.cancel();

  const changed = await withProof("/account/password", {
    currentPassword: PASSWORD,
    newPassword: "another horse battery staple",
  });
  assert.equal(changed.status, 303);
  await changed.body?.cancel();
  const third = browser.cookies.get("__Host-session");
  assert.ok(third && third !== second, "a new ordinary cookie");
  const sessions = await browser.fetch("/api/sessions", {
    headers: { accept: "application/json" },
  }).then(async (r) => ({ body: await r.json() }));
  assert.deepEqual(
    (sessions.body.sessions as { bound: boolean }[]).map((s) => s.bound)
      .filter((bound) => bound),
    [],
    "no bound session",
  );
});
