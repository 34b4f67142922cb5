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
} from "../../stores/sql/mod.ts";
import {
  createMagicLinkApp,
  MAGIC_LINK_LIMITS,
} from "../../examples/magic_link/app.ts";
import { FlakyKV } from "./_harness.ts";
import { LogMailer, type Mailer } from "../../packages/accounts/mod.ts";
import type { KeyValueStore } from "../../mod.ts";

const ORIGIN = "http://localhost:8001";

interface SetupOptions {
  /** Replaces the mailer (default: a LogMailer into `mail`). */
  mailer?: Mailer;
  /** The sessions' key-value store (default: the app's MemoryKV). */
  sessionKv?: (kv: MemoryKV) => KeyValueStore;
  /** The client's address (default: not given). */
  clientAddress?: (req: Request) => string | null;
}

async function setup(options: SetupOptions = {}) {
  const client = createClient({ url: ":memory:" });
  const db = drizzle(client);
  await migrate(db);
  let t = Date.UTC(2026, 0, 1);
  const now = () => t;
  const kv = new MemoryKV({ now });
  const sessions = new SessionManager({
    secret: SecretProvider.fromValue(
      "igPdEj+A+18WEI1QO51udeGlqiLC44yJNB90KohPGJ4=",
    ),
    store: new KVSessionStore(options.sessionKv?.(kv) ?? kv),
    now,
  });
  const credentials = new SQLCredentialStore(db);
  await credentials.create({
    id: "user_1",
    email: "ml@example.com",
    passwordHash: "$pbkdf2-sha256$unused",
    createdAt: now(),
  });
  await credentials.markVerified("user_1", "ml@example.com", now());
  const mail: string[] = [];
  const logs: string[] = [];
  const pending: Promise<void>[] = [];
  const app = createMagicLinkApp({
    sessions,
    credentials,
    tokens: new SQLVerificationTokenStore(db),
    mailer: options.mailer ?? new LogMailer((l) => mail.push(l)),
    kv,
    appOrigin: ORIGIN,
    now,
    clientAddress: options.clientAddress,
    waitUntil: (task) => pending.push(task),
    log: (line) => logs.push(line),
  });
  /** Waits for the background work (lookups and mail) started so far. */
  const settle = async () => {
    while (pending.length > 0) await Promise.all(pending.splice(0));
  };
  const send = async (path: string, init: RequestInit = {}) => {
    const res = await app(new Request(ORIGIN + path, init));
    await settle();
    return res;
  };
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
    logs,
    pending,
    sessions,
    credentials,
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
  assert.equal(landing.headers.get("referrer-policy"), "strict-origin");
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

Deno.test("magic link: an account whose address was never proven gets no link, and the same answer (this example proves no address: pre-account hijacking)", async () => {
  const s = await setup();
  await s.credentials.create({
    id: "user_2",
    email: "unproven@example.com",
    passwordHash: "$pbkdf2-sha256$registered-by-someone-else",
    createdAt: Date.now(),
  });
  const known = await s.ask("ml@example.com");
  const unproven = await s.ask("unproven@example.com");
  assert.equal(known.status, unproven.status);
  assert.equal(await known.text(), await unproven.text());
  assert.equal(s.mail.length, 1);
  assert.match(s.mail[0], /to=ml@example\.com /);
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
    s.advance(2 * 3600 * 1000); // the window slides: two lengths clear it
    assert.equal((await s.ask("ml@example.com")).status, 202);
    assert.equal(s.mail.length, 6);
  } finally {
    s.close();
  }
});

function askRaw(
  app: (req: Request) => Promise<Response>,
  email: string,
  form: boolean,
): Promise<Response> {
  return app(
    new Request(ORIGIN + "/magic-link", {
      method: "POST",
      headers: form
        ? { "content-type": "application/x-www-form-urlencoded" }
        : { "content-type": "application/json", accept: "application/json" },
      body: form ? new URLSearchParams({ email }) : JSON.stringify({ email }),
    }),
  );
}

async function snapshot(res: Response) {
  return {
    status: res.status,
    headers: [...res.headers],
    body: await res.text(),
  };
}

Deno.test("finding 4 (magic-link request reveals registered emails): the answer never waits for the mailer, and is identical for known, unknown and invalid addresses", async () => {
  const release = Promise.withResolvers<void>();
  const sent: string[] = [];
  const s = await setup({
    mailer: {
      send: async (message) => {
        await release.promise; // a mailer that hangs until the test lets go
        sent.push(message.to);
      },
    },
  });
  try {
    for (const form of [false, true]) {
      const answers = [];
      for (
        const email of [
          "ml@example.com",
          "nobody@example.com",
          "a＠b@example.com",
        ]
      ) {
        let timer: ReturnType<typeof setTimeout> | undefined;
        const timeout = new Promise<"timeout">((resolve) => {
          timer = setTimeout(() => resolve("timeout"), 2000);
        });
        const res = await Promise.race([askRaw(s.app, email, form), timeout]);
        clearTimeout(timer);
        assert.notEqual(res, "timeout", `${email}: waited for the mailer`);
        answers.push(await snapshot(res as Response));
      }
      assert.equal(answers[0].status, 202);
      assert.deepEqual(answers[1], answers[0], "unknown = known");
      assert.deepEqual(answers[2], answers[0], "invalid = known");
    }
    assert.deepEqual(sent, [], "nothing was sent yet");
    release.resolve();
    while (s.pending.length > 0) await Promise.all(s.pending.splice(0));
    assert.deepEqual(sent, ["ml@example.com", "ml@example.com"]);
  } finally {
    release.resolve();
    s.close();
  }
});

Deno.test("finding 4: a mail failure is logged, never answered: known addresses still get the same 202", async () => {
  const s = await setup({
    mailer: { send: () => Promise.reject(new Error("mail relay refused")) },
  });
  try {
    for (const form of [false, true]) {
      const known = await snapshot(
        await askRaw(s.app, "ml@example.com", form),
      );
      const unknown = await snapshot(
        await askRaw(s.app, "nobody@example.com", form),
      );
      assert.equal(known.status, 202);
      assert.deepEqual(known, unknown);
    }
    while (s.pending.length > 0) await Promise.all(s.pending.splice(0));
    assert.equal(
      s.logs.filter((l) => l.includes("mail relay refused")).length,
      2,
    );
    assert.ok(s.logs.every((l) => !/token=/.test(l)), "no link in the logs");
  } finally {
    s.close();
  }
});

Deno.test("finding 4: without waitUntil the mail still goes out (fire and forget, errors caught)", async () => {
  const client = createClient({ url: ":memory:" });
  try {
    const db = drizzle(client);
    await migrate(db);
    const kv = new MemoryKV();
    const credentials = new SQLCredentialStore(db);
    await credentials.create({
      id: "user_1",
      email: "ml@example.com",
      passwordHash: "$pbkdf2-sha256$unused",
      createdAt: Date.now(),
    });
    await credentials.markVerified("user_1", "ml@example.com", Date.now());
    const delivered = Promise.withResolvers<string>();
    const logs: string[] = [];
    const app = createMagicLinkApp({
      sessions: new SessionManager({
        secret: SecretProvider.fromValue(
          "igPdEj+A+18WEI1QO51udeGlqiLC44yJNB90KohPGJ4=",
        ),
        store: new KVSessionStore(kv),
      }),
      credentials,
      tokens: new SQLVerificationTokenStore(db),
      mailer: {
        send: (m) => Promise.resolve(delivered.resolve(m.to)),
      },
      kv,
      appOrigin: ORIGIN,
      clientAddress: () => "192.0.2.1",
      log: (l) => logs.push(l),
    });
    assert.equal((await askRaw(app, "ml@example.com", false)).status, 202);
    assert.equal(await delivered.promise, "ml@example.com");
    assert.deepEqual(logs, []);
  } finally {
    client.close();
  }
});

Deno.test("finding 7 (magic-link redemption has no rate limit): POST /magic-link/callback is limited per address", async () => {
  const s = await setup({
    clientAddress: (req) => req.headers.get("x-test-client") ?? "192.0.2.1",
  });
  try {
    const guess = (client: string) =>
      s.send("/magic-link/callback", {
        method: "POST",
        headers: {
          "content-type": "application/json",
          accept: "application/json",
          "x-test-client": client,
        },
        body: JSON.stringify({ token: "A".repeat(43) }),
      });
    const max = MAGIC_LINK_LIMITS.redeemPerAddress.max;
    for (let i = 0; i < max; i++) {
      assert.equal((await guess("192.0.2.1")).status, 400);
    }
    const blocked = await guess("192.0.2.1");
    assert.equal(blocked.status, 429);
    assert.ok(Number(blocked.headers.get("retry-after")) > 0);
    assert.equal((await guess("192.0.2.2")).status, 400, "other address");
    // The window slides: two lengths clear it.
    s.advance(2 * MAGIC_LINK_LIMITS.redeemPerAddress.windowSeconds * 1000);
    assert.equal((await guess("192.0.2.1")).status, 400, "window passed");
  } finally {
    s.close();
  }
});

Deno.test("finding 7: without clientAddress, createMagicLinkApp warns once that per-address limits share one bucket", async () => {
  const bare = await setup();
  const given = await setup({ clientAddress: () => "192.0.2.1" });
  try {
    await bare.send("/");
    const warnings = bare.logs.filter((l) => l.includes("clientAddress"));
    assert.equal(warnings.length, 1);
    assert.match(warnings[0], /one shared bucket/);
    assert.deepEqual(given.logs, []);
  } finally {
    bare.close();
    given.close();
  }
});

Deno.test("finding 3 (logout during a store outage): magic-link POST /logout answers 503 with Retry-After and keeps the cookie", async () => {
  let flaky: FlakyKV | undefined;
  const s = await setup({ sessionKv: (kv) => (flaky = new FlakyKV(kv)) });
  try {
    await s.ask("ml@example.com");
    const signedIn = await s.send("/magic-link/callback", {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams({ token: s.tokenOf(s.mail[0]) }),
    });
    const cookie = signedIn.headers.get("set-cookie")!.split(";")[0];
    for (const down of ["all", "writes"] as const) {
      flaky!.down = down;
      const res = await s.send("/logout", {
        method: "POST",
        headers: {
          cookie,
          "content-type": "application/x-www-form-urlencoded",
          "sec-fetch-site": "same-origin",
        },
      });
      assert.equal(res.status, 503, down);
      assert.ok(Number(res.headers.get("retry-after")) > 0);
      assert.equal(res.headers.get("set-cookie"), null, `${down}: no cookie`);
    }
    flaky!.down = false;
    const me = await s.send("/api/me", { headers: { cookie } });
    assert.equal(me.status, 200, "the session was not ended");
    const out = await s.send("/logout", {
      method: "POST",
      headers: { cookie, "sec-fetch-site": "same-origin" },
    });
    assert.equal(out.status, 303);
    assert.equal(
      (await s.send("/api/me", { headers: { cookie } })).status,
      401,
    );
  } finally {
    s.close();
  }
});
