/**
 * Regression tests for the security review of the reference app
 * (examples/app): each test names its finding and failed before the fix.
 * The magic-link example's findings are in `magic_link_test.ts`.
 */
import assert from "node:assert/strict";
import { type KeyValueStore, MemoryKV } from "../../mod.ts";
import { Pbkdf2Hasher } from "../../lib/authn/pbkdf2_hasher.ts";
import { SlidingWindowLimiter } from "../../lib/throttle/mod.ts";
import { MAX_BODY_BYTES, readBody } from "../../packages/accounts/plugin.ts";
import type { Mailer } from "../../packages/accounts/mod.ts";
import {
  api,
  AtomicKV,
  bearer,
  Browser,
  CountingHasher,
  FlakyKV,
  registerJson,
  startApp,
} from "./_harness.ts";

const PASSWORD = "correct horse battery";

/** The login throttle with `free` failures before a one-minute delay. */
function loginPerAccount(free: number) {
  return {
    loginPerAccount: {
      freeFailures: free,
      baseDelaySeconds: 60,
      maxDelaySeconds: 900,
      hardStop: 100,
    },
  };
}

function login(origin: string, email: string, password: string) {
  return api(origin, "POST", "/login", { email, password });
}

Deno.test("finding 1 (login limit bypass via Unicode spellings): every spelling that normalizeEmail maps to one account counts against one limit", async () => {
  await using app = await startApp({
    limits: loginPerAccount(3),
  });
  await registerJson(app.origin, "uni@example.com");
  // NFKC folds full-width letters: each spelling reaches the same account.
  for (
    const spelling of [
      "ｕｎｉ@example.com",
      "uni@ｅｘａｍｐｌｅ.com",
      " ｕni@EXAMPLE.com",
    ]
  ) {
    const res = await login(app.origin, spelling, "wrong password");
    assert.equal(res.status, 401, spelling);
  }
  const blocked = await login(app.origin, "uni@example.com", PASSWORD);
  assert.equal(blocked.status, 429, "the fourth spelling is throttled");
  assert.ok(Number(blocked.headers.get("retry-after")) > 0);
});

Deno.test("finding 1: input that is not an address shares one counter", async () => {
  await using app = await startApp({
    limits: loginPerAccount(3),
  });
  for (const bad of ["a＠b@example.com", "no-at-sign", "x@y@z"]) {
    assert.equal((await login(app.origin, bad, "whatever1")).status, 401);
  }
  assert.equal((await login(app.origin, "", "whatever1")).status, 429);
});

async function burst(kv: KeyValueStore | undefined) {
  // 100 ms per check, like a real hash: the 50 requests overlap.
  const hasher = new CountingHasher(
    new Pbkdf2Hasher({ iterations: 1000 }),
    100,
  );
  await using app = await startApp({
    hasher,
    ...(kv === undefined ? {} : { kv }),
    limits: loginPerAccount(10),
  });
  await registerJson(app.origin, "burst@example.com");
  hasher.verifies = 0;
  const answers = await Promise.all(
    Array.from(
      { length: 50 },
      () => login(app.origin, "burst@example.com", "wrong password"),
    ),
  );
  const statuses = answers.map((a) => a.status);
  assert.ok(
    hasher.verifies <= 10,
    `${hasher.verifies} password checks passed a limit of 10`,
  );
  assert.equal(statuses.filter((s) => s === 401).length, hasher.verifies);
  // The rest are refused: by the throttle (429), or by the hashing bound
  // before the throttle counts them (503, past its queue of 16).
  assert.equal(
    statuses.filter((s) => s === 429 || s === 503).length,
    50 - hasher.verifies,
  );
  // The throttle's account and pair counters are incremented separately:
  // under contention a few attempts may be refused early, never late.
  assert.ok(hasher.verifies >= 5, `only ${hasher.verifies} checks ran`);
}

Deno.test("finding 2 (burst bypass of the login limit): 50 concurrent wrong logins, limit 10 per email, at most 10 reach the password check (store with atomic increment)", async () => {
  await burst(new AtomicKV(new MemoryKV()));
});

Deno.test("finding 2: the same burst over DenoKV's own increment", async () => {
  await burst(undefined); // the harness's DenoKV
});

Deno.test("finding 2: the same burst over MemoryKV's own increment", async () => {
  await burst(new MemoryKV());
});

Deno.test("finding 2: the attempt is reserved before the hash, and a successful login deletes the email's counter", async () => {
  const hasher = new CountingHasher(new Pbkdf2Hasher({ iterations: 1000 }));
  await using app = await startApp({
    hasher,
    kv: new AtomicKV(new MemoryKV()),
    limits: loginPerAccount(2),
  });
  await registerJson(app.origin, "r@example.com");
  assert.equal(
    (await login(app.origin, "r@example.com", "nope nope")).status,
    401,
  );
  assert.equal(
    (await login(app.origin, "r@example.com", PASSWORD)).status,
    200,
  );
  // Reset: two more failures fit in the window again.
  assert.equal(
    (await login(app.origin, "r@example.com", "nope nope")).status,
    401,
  );
  assert.equal(
    (await login(app.origin, "r@example.com", "nope nope")).status,
    401,
  );
  hasher.verifies = 0;
  assert.equal(
    (await login(app.origin, "r@example.com", PASSWORD)).status,
    429,
  );
  assert.equal(hasher.verifies, 0, "a refused attempt is never hashed");
});

Deno.test("finding 2: without increment, the library's SlidingWindowLimiter falls back to read-then-write and still refuses sequential hits past max", async () => {
  const kv = new FlakyKV(new MemoryKV()); // passes through, has no increment
  const limiter = new SlidingWindowLimiter(kv, {
    now: () => Date.UTC(2026, 0, 1),
  });
  assert.equal(limiter.atomic, false);
  const limits = [{ name: "t", key: "k", max: 2, windowSeconds: 60 }];
  assert.equal(await limiter.take(limits), 0);
  assert.equal(await limiter.take(limits), 0);
  assert.ok(await limiter.take(limits) > 0);
  await limiter.reset(limits);
  assert.equal(await limiter.take(limits), 0);
  assert.equal(new SlidingWindowLimiter(new AtomicKV(kv)).atomic, true);
  assert.equal(new SlidingWindowLimiter(new MemoryKV()).atomic, true);
});

Deno.test("finding 3 (logout during a store outage): POST /logout answers 503 with Retry-After, keeps the cookie and flashes nothing", async () => {
  let flaky: FlakyKV | undefined;
  await using app = await startApp({}, {
    sessionKv: (kv) => (flaky = new FlakyKV(kv)),
  });
  const b = new Browser(app.origin);
  await b.post("/register", { email: "out@example.com", password: PASSWORD });
  const cookie = b.cookies.get("__Host-session")!;
  const { token } = await registerJson(app.origin, "out2@example.com");

  for (const down of ["all", "writes"] as const) {
    flaky!.down = down;
    const res = await b.post("/logout", {});
    assert.equal(res.status, 503, down);
    assert.ok(Number(res.headers.get("retry-after")) > 0, down);
    assert.deepEqual(res.headers.getSetCookie(), [], `${down}: no Set-Cookie`);
    await res.body?.cancel();
    assert.equal(b.cookies.get("__Host-session"), cookie);
    const out = await api(
      app.origin,
      "POST",
      "/logout",
      undefined,
      bearer(token),
    );
    assert.equal(out.status, 503, `${down}: bearer`);
    assert.ok(out.headers.has("retry-after"));
  }

  flaky!.down = false;
  const page = await b.page("/");
  assert.doesNotMatch(page.body, /signed out/, "no flash was set");
  assert.match(page.body, /out@example\.com/, "the session still works");
  const res = await b.post("/logout", {});
  assert.equal(res.status, 303);
  assert.equal(await app.sessions.resolve(cookie), null);
});

Deno.test("finding 4 review: registration and resend answer normally when the mailer fails (no 500; only the user's own address is involved)", async () => {
  const failing: Mailer = {
    send: () => Promise.reject(new Error("smtp down")),
  };
  await using app = await startApp({ mailer: failing });
  const created = await api(app.origin, "POST", "/register", {
    email: "m@example.com",
    password: PASSWORD,
  });
  assert.equal(created.status, 201);
  const b = new Browser(app.origin);
  const form = await b.post("/register", {
    email: "m2@example.com",
    password: PASSWORD,
  });
  assert.equal(form.status, 303);
  const resend = await b.post("/verify/resend", {});
  assert.equal(resend.status, 303);
  await resend.body?.cancel();
  assert.ok(app.logs.some((l) => l.includes("smtp down")));
});

Deno.test("finding 6 (no limit on current-password guesses): POST /account/password is limited per account, then 429 even for the right password", async () => {
  await using app = await startApp({
    limits: { passwordChangePerAccount: { max: 3, windowSeconds: 900 } },
  });
  const { token } = await registerJson(app.origin, "pw@example.com");
  const change = (currentPassword: string, t = token) =>
    api(app.origin, "POST", "/account/password", {
      currentPassword,
      newPassword: "a brand new password",
    }, bearer(t));
  for (let i = 0; i < 3; i++) {
    assert.equal((await change(`guess number ${i}`)).status, 401);
  }
  const blocked = await change(PASSWORD);
  assert.equal(blocked.status, 429);
  assert.ok(Number(blocked.headers.get("retry-after")) > 0);
  assert.equal(
    (await login(app.origin, "pw@example.com", PASSWORD)).status,
    200,
    "the password did not change",
  );
  app.advance(1800 * 1000); // the window slides: two lengths clear it
  const changed = await change(PASSWORD);
  assert.equal(changed.status, 200, "the window passed");
});

Deno.test("finding 6: POST /account/password is limited per address across accounts, and a success resets the account's counter", async () => {
  await using app = await startApp({
    limits: {
      passwordChangePerAccount: { max: 2, windowSeconds: 900 },
      passwordChangePerAddress: { max: 5, windowSeconds: 900 },
    },
  });
  const change = (token: string, currentPassword: string, client?: string) =>
    api(app.origin, "POST", "/account/password", {
      currentPassword,
      newPassword: "a brand new password",
    }, { ...bearer(token), ...(client ? { "x-test-client": client } : {}) });
  const a = await registerJson(app.origin, "pa@example.com");
  assert.equal((await change(a.token, "wrong guess")).status, 401);
  const ok = await change(a.token, PASSWORD);
  assert.equal(ok.status, 200);
  const fresh = ok.body.token as string;
  assert.equal(
    (await change(fresh, "wrong guess")).status,
    401,
    "the success reset the account's counter",
  );
  const b = await registerJson(app.origin, "pb@example.com");
  assert.equal((await change(b.token, "wrong guess")).status, 401);
  assert.equal((await change(b.token, "wrong guess")).status, 401);
  const c = await registerJson(app.origin, "pc@example.com");
  const blocked = await change(c.token, "wrong guess");
  assert.equal(blocked.status, 429, "sixth check from one address");
  assert.ok(blocked.headers.has("retry-after"));
  assert.equal(
    (await change(c.token, "wrong guess", "203.0.113.50")).status,
    401,
    "another address is not affected",
  );
});

Deno.test("finding 7 (default clientAddress is one bucket): createApp logs a warning once when clientAddress is not given", async () => {
  {
    await using app = await startApp({ clientAddress: undefined });
    const warnings = app.logs.filter((l) => l.includes("clientAddress"));
    assert.equal(warnings.length, 1);
    assert.match(warnings[0], /one shared bucket/);
    await (await fetch(app.origin + "/")).body?.cancel();
    assert.equal(
      app.logs.filter((l) => l.includes("clientAddress")).length,
      1,
      "once, at createApp time",
    );
  }
  await using app = await startApp();
  assert.equal(app.logs.filter((l) => l.includes("clientAddress")).length, 0);
});

function countingStream(total: number, chunk = 4096) {
  const pulled = { bytes: 0 };
  const stream = new ReadableStream<Uint8Array>({
    pull(controller) {
      if (pulled.bytes >= total) return controller.close();
      const size = Math.min(chunk, total - pulled.bytes);
      pulled.bytes += size;
      controller.enqueue(new Uint8Array(size).fill(0x61));
    },
  }, { highWaterMark: 0 });
  return { stream, pulled };
}

Deno.test("finding 8 (unbounded body read without Content-Length): a 1 MB chunked body is refused after reading about MAX_BODY_BYTES", async () => {
  for (
    const type of [
      "application/json",
      "application/x-www-form-urlencoded",
      "multipart/form-data; boundary=x",
    ]
  ) {
    const { stream, pulled } = countingStream(1024 * 1024);
    const req = new Request("http://localhost/login", {
      method: "POST",
      headers: { "content-type": type },
      body: stream,
    });
    assert.equal(req.headers.get("content-length"), null);
    assert.equal(await readBody(req), null, type);
    assert.ok(
      pulled.bytes <= MAX_BODY_BYTES + 4096,
      `${type}: read ${pulled.bytes} bytes of a 1 MB body`,
    );
  }
  // A small chunked body is still read.
  const small = new Request("http://localhost/login", {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: new Blob(['{"email":"a@b.c"}']).stream(),
  });
  assert.deepEqual(await readBody(small), {
    kind: "json",
    fields: { email: "a@b.c" },
  });
});

Deno.test("finding 8: over HTTP, a 1 MB chunked body to POST /login answers 413 (the one body cap, issue 16 finding 3)", async () => {
  await using app = await startApp();
  const { stream } = countingStream(1024 * 1024, 64 * 1024);
  const res = await fetch(app.origin + "/login", {
    method: "POST",
    headers: { "content-type": "application/json", accept: "application/json" },
    body: stream,
  });
  assert.equal(res.status, 413);
  assert.equal((await res.json()).error, "payload_too_large");
});

/**
 * Runs the app's `main.ts` with exactly `env` (plus what Deno needs to find
 * its cache) and a temporary `DATA_DIR`; answers its exit code, its stderr
 * and whether it created the data folder. A start that should fail but
 * serves is ended after 15 s rather than hang.
 */
async function runMain(
  env: Record<string, string>,
): Promise<{ code: number; stderr: string; createdData: boolean }> {
  const dir = await Deno.makeTempDir({ prefix: "portcullis-main-" });
  try {
    const full: Record<string, string> = {
      ...env,
      DATA_DIR: `${dir}/data`,
      PORT: "0",
      NO_COLOR: "1",
    };
    for (const name of ["PATH", "HOME", "DENO_DIR", "XDG_CACHE_HOME"]) {
      const value = Deno.env.get(name);
      if (value !== undefined) full[name] = value;
    }
    const out = await new Deno.Command(Deno.execPath(), {
      args: [
        "run",
        "-A",
        new URL("../../examples/app/main.ts", import.meta.url).pathname,
      ],
      clearEnv: true,
      env: full,
      signal: AbortSignal.timeout(15_000),
      stdout: "piped",
      stderr: "piped",
    }).output();
    const createdData = await Deno.stat(`${dir}/data`).then(
      () => true,
      () => false,
    );
    return {
      code: out.code,
      stderr: new TextDecoder().decode(out.stderr),
      createdData,
    };
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}

Deno.test("finding 9 (APP_ORIGIN in production): main.ts with DENO_ENV=production and no APP_ORIGIN stops with a clear message", async () => {
  const { code, stderr, createdData } = await runMain({
    DENO_ENV: "production",
    AUTH_SECRET: "IUNk9qxIW2C1ktsA50PF5jG1v87s4dzVK79CEcYph4g=",
    RESEND_API_KEY: "re_test",
  });
  assert.equal(code, 1, stderr);
  assert.match(stderr, /APP_ORIGIN is not set/);
  assert.equal(createdData, false, "the data folder was not created");
});

Deno.test("red-team review (OIDC_ALLOW_HTTP): main.ts with a value that is neither yes nor no stops with a clear message and no stack trace", async () => {
  const { code, stderr } = await runMain({
    OIDC_ISSUER: "https://id.example.test",
    OIDC_CLIENT_ID: "app",
    OIDC_CLIENT_SECRET: "app-secret-0123456789-abcdefghijklmnop",
    OIDC_ALLOW_HTTP: "maybe",
  });
  assert.equal(code, 1, stderr);
  assert.match(
    stderr,
    /^error: OIDC_ALLOW_HTTP must be one of 1, true, yes, on \(yes\) or 0, false, no, off \(no\), in any case: received "maybe"$/m,
  );
  assert.doesNotMatch(stderr, /^\s+at /m, "no stack trace");
});

Deno.test("main.ts: a COOKIE_SECURE that is neither yes nor no stops the start before the data folder is made", async () => {
  const { code, stderr, createdData } = await runMain({
    COOKIE_SECURE: "flase",
  });
  assert.equal(code, 1, stderr);
  assert.match(
    stderr,
    /^error: COOKIE_SECURE must be one of 1, true, yes, on \(yes\) or 0, false, no, off \(no\), in any case: received "flase"$/m,
  );
  assert.doesNotMatch(stderr, /^\s+at /m, "no stack trace");
  assert.equal(createdData, false, "the data folder was not created");
});

Deno.test("red-team review (/password/forgot and /magic-link timing): the address is looked up only after the answer is in hand, for a registered address as for an unknown one; the mail still goes out", async () => {
  const { startTestApp } = await import("../../examples/app/testing.ts");
  const app = await startTestApp({ MAGIC_LINK: "on" });
  try {
    await app.verifiedUser("known@example.com", "correct horse battery staple");
    const order: string[] = [];
    const findByEmail = app.credentials.findByEmail.bind(app.credentials);
    app.credentials.findByEmail = (email: string) => {
      order.push(`lookup ${email}`);
      return findByEmail(email);
    };
    for (const path of ["/password/forgot", "/magic-link"]) {
      for (const email of ["known@example.com", "nobody@example.com"]) {
        order.length = 0;
        const mails = app.mail.length;
        const { res } = await app.call("POST", path, { email });
        order.push("answer");
        assert.equal(res.status, 202, `${path} ${email}`);
        // Before the fix the lookup (a blocking call on a local database)
        // ran inside the handler, before the answer.
        assert.deepEqual(order, ["answer"], `${path} ${email}`);
        await new Promise((r) => setTimeout(r, 50));
        assert.deepEqual(order, ["answer", `lookup ${email}`], path);
        if (email.startsWith("known") && path === "/password/forgot") {
          assert.equal(app.mail.length, mails + 1, "the reset link went out");
          assert.match(app.mail.at(-1)!, /password\/reset\?token=/);
        }
      }
    }
  } finally {
    app.close();
  }
});
