/**
 * The reference app's email change over HTTP (form and JSON):
 * `POST /account/email`, `GET|POST /account/email/confirm`.
 */
import assert from "node:assert/strict";
import {
  EMAIL_CHANGE_PURPOSE,
  MemoryVerificationTokenStore,
  type VerificationTokenStore,
} from "@portcullis/auth/verification";
import {
  api,
  bearer,
  Browser,
  registerJson,
  startApp,
  verifyDirectly,
} from "./_harness.ts";

const PASSWORD = "correct horse battery";

function tokenOf(link: string): string {
  return new URL(link).searchParams.get("token") ?? "";
}

Deno.test("SECURITY item 17: POST /account/email needs the current password: a wrong one gets the answer /account/password gives (401); anonymous 401", async () => {
  await using app = await startApp();
  const { token } = await registerJson(app.origin, "a@example.com", PASSWORD);
  const wrong = await api(app.origin, "POST", "/account/email", {
    password: "not the password",
    email: "b@example.com",
  }, bearer(token));
  const viaPassword = await api(app.origin, "POST", "/account/password", {
    currentPassword: "not the password",
    newPassword: "whatever new passphrase",
  }, bearer(token));
  assert.equal(wrong.status, 401);
  assert.deepEqual(wrong.body, viaPassword.body);
  assert.equal(viaPassword.status, 401);
  const b = new Browser(app.origin);
  await b.post("/login", { email: "a@example.com", password: PASSWORD });
  const form = await b.post("/account/email", {
    password: "nope nope nope",
    email: "b@example.com",
  });
  assert.equal(form.status, 401);
  assert.match(await form.text(), /The current password is incorrect/);
  assert.equal(
    (await api(app.origin, "POST", "/account/email", {
      password: PASSWORD,
      email: "b@example.com",
    })).status,
    401,
  );
  assert.equal(app.mail.filter((l) => l.includes("b@example.com")).length, 0);
});

Deno.test("POST /account/email: a taken address answers 409, a malformed one 422, the same one 422", async () => {
  await using app = await startApp();
  const { token } = await registerJson(app.origin, "a@example.com", PASSWORD);
  await registerJson(app.origin, "taken@example.com", PASSWORD);
  const ask = (email: string) =>
    api(
      app.origin,
      "POST",
      "/account/email",
      { password: PASSWORD, email },
      bearer(token),
    );
  const taken = await ask("Taken@Example.com");
  assert.equal(taken.status, 409);
  assert.equal(taken.body.error, "email_taken");
  assert.equal((await ask("not an address")).status, 422);
  assert.equal((await ask("a@example.com")).status, 422);
});

Deno.test("POST /account/email (JSON) answers 202 {} and mails the new address; POST /account/email/confirm (JSON) changes it, counts it verified, and notifies the old address", async () => {
  await using app = await startApp();
  const { subject, token } = await registerJson(
    app.origin,
    "old@example.com",
    PASSWORD,
  );
  const res = await api(app.origin, "POST", "/account/email", {
    password: PASSWORD,
    email: "New@Example.com",
  }, bearer(token));
  assert.equal(res.status, 202);
  assert.deepEqual(res.body, {});
  const link = app.lastLink("new@example.com");
  assert.match(
    link,
    new RegExp(`^${app.origin}/account/email/confirm\\?token=`),
  );
  assert.equal(
    (await app.credentials.findById(subject))!.email,
    "old@example.com",
    "nothing changes before the link is used",
  );

  // Outside the account's signed-in browser the link alone is not enough.
  const alone = await api(app.origin, "POST", "/account/email/confirm", {
    token: tokenOf(link),
  });
  assert.equal(alone.status, 401);
  assert.equal(alone.body.error, "invalid_credentials");
  assert.equal(
    (await app.credentials.findById(subject))!.email,
    "old@example.com",
  );
  const confirmed = await api(app.origin, "POST", "/account/email/confirm", {
    token: tokenOf(link),
    password: PASSWORD,
  });
  assert.equal(confirmed.status, 200);
  assert.deepEqual(confirmed.body, {});
  assert.equal(confirmed.headers.get("referrer-policy"), "strict-origin");
  const user = (await app.credentials.findById(subject))!;
  assert.equal(user.email, "new@example.com");
  assert.ok(user.verifiedAt > 0, "the new address counts as verified");
  assert.ok(
    app.mail.some((l) =>
      l.includes("to=old@example.com ") &&
      l.includes("Your email address was changed")
    ),
    "the old address gets a notice",
  );
  assert.equal(
    (await api(app.origin, "POST", "/login", {
      email: "new@example.com",
      password: PASSWORD,
    })).status,
    200,
  );
  assert.equal(
    (await api(app.origin, "POST", "/login", {
      email: "old@example.com",
      password: PASSWORD,
    })).status,
    401,
  );
  const reused = await api(app.origin, "POST", "/account/email/confirm", {
    token: tokenOf(link),
  });
  assert.equal(reused.status, 400);
  assert.equal(
    (await api(app.origin, "GET", "/api/me", undefined, bearer(token))).body
      .email,
    "new@example.com",
  );
});

Deno.test("POST /account/email (form) answers 303 to /account; GET /account/email/confirm in the owner's signed-in browser confirms at once (303)", async () => {
  await using app = await startApp();
  const b = new Browser(app.origin);
  await b.post("/register", { email: "own@example.com", password: PASSWORD });
  const res = await b.post("/account/email", {
    password: PASSWORD,
    email: "mine@example.com",
  });
  assert.equal(res.status, 303);
  assert.equal(res.headers.get("location"), "/account");
  assert.match(
    (await b.page("/account")).body,
    /A link to confirm mine@example\.com is on its way/,
  );
  const confirm = await b.fetch(app.lastLink("mine@example.com"));
  assert.equal(confirm.status, 303);
  assert.equal(confirm.headers.get("location"), "/account");
  assert.equal(confirm.headers.get("referrer-policy"), "strict-origin");
  const account = await b.page("/account");
  assert.match(account.body, /mine@example\.com/);
  assert.match(account.body, /Your email address is now mine@example\.com/);
});

Deno.test("GET /account/email/confirm elsewhere (a scanner, another user's browser) only shows a form; its POST confirms (303); bad tokens 400", async () => {
  await using app = await startApp();
  const { subject, token } = await registerJson(
    app.origin,
    "s@example.com",
    PASSWORD,
  );
  await api(app.origin, "POST", "/account/email", {
    password: PASSWORD,
    email: "s2@example.com",
  }, bearer(token));
  const link = app.lastLink("s2@example.com");
  const other = new Browser(app.origin);
  await other.post("/register", {
    email: "other@example.com",
    password: PASSWORD,
  });
  for (const client of [new Browser(app.origin), other]) {
    const page = await client.page(
      new URL(link).pathname + new URL(link).search,
    );
    assert.equal(page.status, 200);
    assert.equal(page.res.headers.get("referrer-policy"), "strict-origin");
    assert.match(
      page.body,
      /<form method="post" action="\/account\/email\/confirm">/,
    );
    assert.ok(page.body.includes(`name="token" value="${tokenOf(link)}"`));
  }
  assert.equal(
    (await app.credentials.findById(subject))!.email,
    "s@example.com",
    "GETs changed nothing",
  );
  const anon = new Browser(app.origin);
  for (const password of [undefined, "not the password"]) {
    const refused = await anon.post("/account/email/confirm", {
      token: tokenOf(link),
      ...(password === undefined ? {} : { password }),
    });
    assert.equal(refused.status, 401);
    assert.match(await refused.text(), /Enter the password of the account/);
  }
  assert.equal(
    (await app.credentials.findById(subject))!.email,
    "s@example.com",
    "a refused confirmation changes nothing",
  );
  const posted = await anon.post("/account/email/confirm", {
    token: tokenOf(link),
    password: PASSWORD,
  });
  assert.equal(posted.status, 303);
  assert.equal(posted.headers.get("location"), "/");
  assert.ok(
    !posted.headers.getSetCookie().some((c) => c.startsWith("__Host-session=")),
    "signs nobody in",
  );
  assert.equal(
    (await app.credentials.findById(subject))!.email,
    "s2@example.com",
  );
  for (const bad of [tokenOf(link), "nope", ""]) {
    const r = await anon.post("/account/email/confirm", { token: bad });
    assert.equal(r.status, 400, bad);
    await r.body?.cancel();
  }
  assert.equal(
    (await anon.page("/account/email/confirm?token=nope")).status,
    400,
  );
});

Deno.test("POST /account/email/confirm answers 409 when the address was taken meanwhile, and changes nothing", async () => {
  await using app = await startApp();
  const { subject, token } = await registerJson(
    app.origin,
    "first@example.com",
    PASSWORD,
  );
  await api(app.origin, "POST", "/account/email", {
    password: PASSWORD,
    email: "wanted@example.com",
  }, bearer(token));
  const link = app.lastLink("wanted@example.com");
  await registerJson(app.origin, "wanted@example.com", PASSWORD);
  const res = await api(app.origin, "POST", "/account/email/confirm", {
    token: tokenOf(link),
    password: PASSWORD,
  });
  assert.equal(res.status, 409);
  assert.equal(res.body.error, "email_taken");
  assert.equal(
    (await app.credentials.findById(subject))!.email,
    "first@example.com",
  );
});

Deno.test("SECURITY item 42: no link redeems as another kind: an email-change token fails at /verify and /password/reset, a reset token at /account/email/confirm", async () => {
  await using app = await startApp();
  const { token } = await registerJson(app.origin, "x@example.com", PASSWORD);
  // Verified: a first proof of the address (the reset below) would cancel
  // the email change asked for before it.
  await verifyDirectly(app, "x@example.com");
  await api(app.origin, "POST", "/account/email", {
    password: PASSWORD,
    email: "x2@example.com",
  }, bearer(token));
  const change = tokenOf(app.lastLink("x2@example.com"));
  await api(app.origin, "POST", "/password/forgot", { email: "x@example.com" });
  const reset = tokenOf(await app.awaitLink("x@example.com", 2));
  const verify = await api(app.origin, "POST", "/verify", { token: change });
  assert.equal(verify.status, 400);
  assert.equal(
    (await api(app.origin, "POST", "/password/reset", {
      token: change,
      password: "another passphrase",
    })).status,
    400,
  );
  assert.equal(
    (await api(app.origin, "POST", "/account/email/confirm", { token: reset }))
      .status,
    400,
  );
  // Each works for its own purpose (the reset, a password write, also
  // ends the email change asked for before it: a fresh one works).
  assert.equal(
    (await api(app.origin, "POST", "/password/reset", {
      token: reset,
      password: "another passphrase",
    })).status,
    200,
  );
  assert.equal(
    (await api(app.origin, "POST", "/account/email/confirm", {
      token: change,
      password: "another passphrase",
    })).status,
    400,
  );
  const { token: again } = await api(app.origin, "POST", "/login", {
    email: "x@example.com",
    password: "another passphrase",
  }).then((r) => r.body as { token: string });
  assert.equal(
    (await api(app.origin, "POST", "/account/email", {
      password: "another passphrase",
      email: "x2@example.com",
    }, bearer(again))).status,
    202,
  );
  assert.equal(
    (await api(app.origin, "POST", "/account/email/confirm", {
      token: tokenOf(app.lastLink("x2@example.com")),
      password: "another passphrase",
    })).status,
    200,
  );
});

Deno.test("red-team review: an account cannot be moved onto a victim's address by the victim's click alone (the confirm asks for the account's password)", async () => {
  await using app = await startApp();
  // The attacker's own, verified account, with a sign-in method of its own.
  const { subject, token } = await registerJson(
    app.origin,
    "attacker@example.com",
    PASSWORD,
  );
  const asked = await api(app.origin, "POST", "/account/email", {
    password: PASSWORD,
    email: "victim@example.com",
  }, bearer(token));
  assert.equal(asked.status, 202);
  // The victim opens the mail and presses the button, knowing no password.
  const link = app.lastLink("victim@example.com");
  const victim = new Browser(app.origin);
  const page = await victim.page(new URL(link).pathname + new URL(link).search);
  assert.match(page.body, /name="password"/);
  const pressed = await victim.post("/account/email/confirm", {
    token: tokenOf(link),
  });
  assert.equal(pressed.status, 401);
  await pressed.body?.cancel();
  assert.equal(
    (await app.credentials.findById(subject))!.email,
    "attacker@example.com",
    "the attacker's account did not move onto the victim's address",
  );
  // The victim's address is still free to register.
  const own = await registerJson(app.origin, "victim@example.com", PASSWORD);
  assert.notEqual(own.subject, subject);
});

/** Asks for a move of the account behind `token` to `email`; the link. */
async function askMove(
  app: { origin: string; lastLink(email: string): string },
  token: string,
  email: string,
): Promise<string> {
  const asked = await api(app.origin, "POST", "/account/email", {
    password: PASSWORD,
    email,
  }, bearer(token));
  assert.equal(asked.status, 202);
  return app.lastLink(email);
}

Deno.test("red-team review: an email-change link dies with the owner's recovery (password reset, password change, signing out everywhere), even opened in the owner's own browser", async () => {
  await using app = await startApp();
  const owner = new Browser(app.origin);
  await owner.post("/register", {
    email: "own@example.com",
    password: PASSWORD,
  });
  const subject = await verifyDirectly(app, "own@example.com");
  const { token } = await api(app.origin, "POST", "/login", {
    email: "own@example.com",
    password: PASSWORD,
  }).then((r) => r.body as { token: string });
  const stays = async (link: string) => {
    const res = await owner.fetch(link);
    assert.equal(res.status, 400, "the link no longer works");
    await res.body?.cancel();
    assert.equal(
      (await app.credentials.findById(subject))!.email,
      "own@example.com",
    );
  };
  // Signing out everywhere (from the owner's browser).
  let link = await askMove(app, token, "thief1@example.com");
  const out = await owner.post("/account/sessions/revoke-others", {});
  assert.equal(out.status, 303);
  await stays(link);
  // A password change.
  const { token: t2 } = await api(app.origin, "POST", "/login", {
    email: "own@example.com",
    password: PASSWORD,
  }).then((r) => r.body as { token: string });
  link = await askMove(app, t2, "thief2@example.com");
  const changed = await owner.post("/account/password", {
    currentPassword: PASSWORD,
    newPassword: "a brand new passphrase",
  });
  assert.equal(changed.status, 303);
  await stays(link);
  // A password reset by mail.
  const NEW = "a brand new passphrase";
  const { token: t3 } = await api(app.origin, "POST", "/login", {
    email: "own@example.com",
    password: NEW,
  }).then((r) => r.body as { token: string });
  const asked = await api(app.origin, "POST", "/account/email", {
    password: NEW,
    email: "thief3@example.com",
  }, bearer(t3));
  assert.equal(asked.status, 202);
  link = app.lastLink("thief3@example.com");
  const mailed = app.mail.filter((l) => l.includes("to=own@example.com "));
  await owner.post("/password/forgot", { email: "own@example.com" });
  // The reset mail goes out after the answer.
  const reset = await app.awaitLink("own@example.com", mailed.length + 1);
  const done = await owner.post("/password/reset", {
    token: new URL(reset).searchParams.get("token") ?? "",
    password: "yet another passphrase",
  });
  assert.equal(done.status, 303);
  await owner.post("/login", {
    email: "own@example.com",
    password: "yet another passphrase",
  });
  await stays(link);
});

Deno.test("red-team review: a password write that lands while an email change is asked for cancels that link too", async () => {
  let hook: (() => Promise<void>) | null = null;
  const stored: string[] = [];
  const inner = new MemoryVerificationTokenStore();
  const tokens: VerificationTokenStore = {
    put: async (record) => {
      await inner.put(record);
      if (record.purpose !== EMAIL_CHANGE_PURPOSE) return;
      stored.push(record.tokenHash);
      // The owner's reset writes the new password just as the link is
      // stored, after this request checked the old password.
      const run = hook;
      hook = null;
      await run?.();
    },
    consume: (hash, purpose) => inner.consume(hash, purpose),
    find: (hash, purpose) => inner.find(hash, purpose),
    deleteFor: (subject, purpose) => inner.deleteFor(subject, purpose),
  };
  await using app = await startApp({ tokens });
  const { subject, token } = await registerJson(
    app.origin,
    "own@example.com",
    PASSWORD,
  );
  await verifyDirectly(app, "own@example.com");
  hook = async () => {
    await app.credentials.updatePasswordHash(subject, "$pbkdf2-sha256$other");
  };
  const asked = await api(app.origin, "POST", "/account/email", {
    password: PASSWORD,
    email: "thief@example.com",
  }, bearer(token));
  assert.equal(asked.status, 401);
  assert.equal(stored.length, 1, "the link was issued before the check");
  assert.equal(
    await inner.find(stored[0], EMAIL_CHANGE_PURPOSE),
    null,
    "and cancelled after it",
  );
  assert.equal(
    app.mail.filter((l) => l.includes("thief@example.com")).length,
    0,
  );
});

Deno.test("red-team review: GET /account/email/confirm reached from another site shows the form even in the owner's browser; the address stays until the owner posts it", async () => {
  await using app = await startApp();
  const b = new Browser(app.origin);
  await b.post("/register", { email: "own@example.com", password: PASSWORD });
  const asked = await b.post("/account/email", {
    password: PASSWORD,
    email: "other@example.com",
  });
  assert.equal(asked.status, 303);
  const link = app.lastLink("other@example.com");
  const { subject } = (await b.fetch("/api/me", {
    headers: { accept: "application/json" },
  }).then((r) => r.json())) as { subject: string };
  for (const site of ["cross-site", "same-site"]) {
    const res = await b.fetch(link, { headers: { "sec-fetch-site": site } });
    assert.equal(res.status, 200);
    assert.match(await res.text(), /name="token"/);
    assert.equal(
      (await app.credentials.findById(subject))!.email,
      "own@example.com",
    );
  }
  const own = await b.fetch(link, { headers: { "sec-fetch-site": "none" } });
  assert.equal(own.status, 303);
  await own.body?.cancel();
  assert.equal(
    (await app.credentials.findById(subject))!.email,
    "other@example.com",
  );
});
