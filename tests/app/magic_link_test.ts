/**
 * The magic-link example: a non-password credential check that starts the
 * session with `signIn`, exactly like the password flow.
 */
import assert from "node:assert/strict";
import { createClient } from "@libsql/client";
import { drizzle } from "drizzle-orm/libsql";
import {
  KVSessionStore,
  MemoryKV,
  SecretProvider,
  SessionManager,
} from "../../mod.ts";
import {
  migrate,
  SQLCredentialStore,
  SQLVerificationTokenStore,
} from "../../stores/sql.ts";
import { createMagicLinkApp } from "../../examples/magic_link/app.ts";
import { LogMailer } from "../../examples/app/mailer.ts";

const ORIGIN = "http://localhost:8001";

async function setup() {
  const client = createClient({ url: ":memory:" });
  const db = drizzle(client);
  await migrate(db);
  let t = Date.UTC(2026, 0, 1);
  const now = () => t;
  const kv = new MemoryKV({ now });
  const sessions = new SessionManager({
    secret: SecretProvider.fromValue("magic-link-test-secret-0123456789abcdef"),
    store: new KVSessionStore(kv),
    now,
  });
  const credentials = new SQLCredentialStore(db);
  await credentials.create({
    id: "user_1",
    email: "ml@example.com",
    passwordHash: "$pbkdf2-sha256$unused",
    createdAt: now(),
  });
  const mail: string[] = [];
  const app = createMagicLinkApp({
    sessions,
    credentials,
    tokens: new SQLVerificationTokenStore(db),
    mailer: new LogMailer((l) => mail.push(l)),
    kv,
    appOrigin: ORIGIN,
    now,
  });
  const send = (path: string, init: RequestInit = {}) =>
    app(new Request(ORIGIN + path, init));
  const tokenOf = (line: string) =>
    new URL(line.match(/link=(\S+)/)![1]).searchParams.get("token")!;
  const redeem = (token: string) =>
    send("/magic-link/callback", {
      method: "POST",
      headers: {
        "content-type": "application/json",
        accept: "application/json",
      },
      body: JSON.stringify({ token }),
    });
  const ask = (email: string) =>
    send("/magic-link", {
      method: "POST",
      headers: {
        "content-type": "application/json",
        accept: "application/json",
      },
      body: JSON.stringify({ email }),
    });
  return {
    app,
    send,
    ask,
    redeem,
    tokenOf,
    mail,
    sessions,
    advance: (ms: number) => t += ms,
    close: () => client.close(),
  };
}

Deno.test("magic link: the mailed link signs in with a session from signIn, usable as Bearer and cookie", async () => {
  const s = await setup();
  const asked = await s.ask("ML@example.com");
  assert.equal(asked.status, 202);
  assert.equal(s.mail.length, 1);
  assert.match(s.mail[0], /to=ml@example\.com /);
  assert.match(
    s.mail[0],
    new RegExp(`link=${ORIGIN}/magic-link/callback\\?token=`),
  );
  const token = s.tokenOf(s.mail[0]);

  // The GET landing page only shows a button: prefetching scanners consume nothing.
  const landing = await s.send(`/magic-link/callback?token=${token}`);
  assert.equal(landing.status, 200);
  assert.equal(landing.headers.get("referrer-policy"), "no-referrer");
  assert.equal(landing.headers.get("set-cookie"), null);

  const res = await s.redeem(token);
  assert.equal(res.status, 200);
  const body = await res.json();
  const identity = await s.sessions.resolve(body.token);
  assert.equal(identity?.subject, "user_1");
  const me = await s.send("/api/me", {
    headers: { authorization: `Bearer ${body.token}` },
  });
  assert.deepEqual(await me.json(), {
    subject: "user_1",
    email: "ml@example.com",
  });

  // The form flow sets the same session cookie as the password flow.
  await s.ask("ml@example.com");
  const form = await s.send("/magic-link/callback", {
    method: "POST",
    headers: { "content-type": "application/x-www-form-urlencoded" },
    body: new URLSearchParams({ token: s.tokenOf(s.mail[1]) }),
  });
  assert.equal(form.status, 303);
  const cookie = form.headers.get("set-cookie")!;
  assert.match(
    cookie,
    /^__Host-session=[^;]+; Path=\/; Secure; HttpOnly; SameSite=Lax; Max-Age=\d+$/,
  );

  // Logging out revokes it like any session.
  const out = await s.send("/logout", {
    method: "POST",
    headers: { authorization: `Bearer ${body.token}` },
  });
  assert.equal(out.status, 204);
  assert.equal(await s.sessions.resolve(body.token), null);
  s.close();
});

Deno.test("magic link: unknown and known emails get the same answer; only known ones get mail", async () => {
  const s = await setup();
  const known = await s.ask("ml@example.com");
  const unknown = await s.ask("nobody@example.com");
  assert.equal(known.status, unknown.status);
  assert.deepEqual([...known.headers], [...unknown.headers]);
  assert.equal(await known.text(), await unknown.text());
  assert.equal(s.mail.length, 1);
  s.close();
});

Deno.test("magic link: works once, expires after 15 minutes, and a newer link voids the older", async () => {
  const s = await setup();
  await s.ask("ml@example.com");
  const first = s.tokenOf(s.mail[0]);
  assert.equal((await s.redeem(first)).status, 200);
  assert.equal((await s.redeem(first)).status, 400, "reuse");

  await s.ask("ml@example.com");
  const expiring = s.tokenOf(s.mail[1]);
  s.advance(15 * 60 * 1000);
  assert.equal((await s.redeem(expiring)).status, 400, "expired");

  await s.ask("ml@example.com");
  const older = s.tokenOf(s.mail[2]);
  await s.ask("ml@example.com");
  const newer = s.tokenOf(s.mail[3]);
  assert.equal((await s.redeem(older)).status, 400, "older link");
  assert.equal((await s.redeem(newer)).status, 200);
  assert.equal((await s.redeem("not-a-token")).status, 400);
  s.close();
});

Deno.test("magic link: a cross-site POST is refused (login CSRF)", async () => {
  const s = await setup();
  await s.ask("ml@example.com");
  const res = await s.send("/magic-link/callback", {
    method: "POST",
    headers: {
      "content-type": "application/x-www-form-urlencoded",
      "sec-fetch-site": "cross-site",
    },
    body: new URLSearchParams({ token: s.tokenOf(s.mail[0]) }),
  });
  assert.equal(res.status, 403);
  s.close();
});

Deno.test("magic link: requests are rate-limited per email (SECURITY.md item 46), and invalid addresses are answered like unknown ones", async () => {
  const s = await setup();
  try {
    for (let i = 0; i < 5; i++) {
      assert.equal((await s.ask("ml@example.com")).status, 202);
    }
    const limited = await s.ask("ML@Example.com");
    assert.equal(limited.status, 429);
    assert.ok(Number(limited.headers.get("retry-after")) > 0);
    assert.equal(s.mail.length, 5, "no mail past the limit");
    const invalid = await s.ask("a＠b@example.com");
    assert.equal(invalid.status, 202);
    assert.equal(s.mail.length, 5);
    s.advance(3600 * 1000);
    assert.equal((await s.ask("ml@example.com")).status, 202);
    assert.equal(s.mail.length, 6);
  } finally {
    s.close();
  }
});
