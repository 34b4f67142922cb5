/**
 * Regression tests for the hardening review of the reference app and the
 * library: each test names the finding or the SECURITY item it guards and
 * failed on the code before the fix.
 */
import assert from "node:assert/strict";
import type { PasswordHasher } from "../../mod.ts";
import { Pbkdf2Hasher } from "../../lib/authn/pbkdf2_hasher.ts";
import {
  api,
  bearer,
  Browser,
  FlakyKV,
  registerJson,
  startApp,
} from "./_harness.ts";

const PASSWORD = "correct horse battery";
const NEW_PASSWORD = "a brand new password";

function login(
  origin: string,
  email: string,
  password: string,
  client = "198.51.100.1",
) {
  return api(origin, "POST", "/login", { email, password }, {
    "x-test-client": client,
  });
}

function changePassword(origin: string, token: string, current: string) {
  return api(origin, "POST", "/account/password", {
    currentPassword: current,
    newPassword: NEW_PASSWORD,
  }, bearer(token));
}

async function me(origin: string, token: string): Promise<number> {
  return (await api(origin, "GET", "/api/me", undefined, bearer(token))).status;
}

Deno.test("hardening finding 1 / SECURITY item 17: a password change whose session-store write fails changes nothing: the old password stays, and the retry signs every other session out", async () => {
  let flaky: FlakyKV | undefined;
  await using app = await startApp({}, {
    // The outage: the denylist's store takes no writes (reads still work).
    sessionKv: (kv) => (flaky = new FlakyKV(kv)),
  });
  const victim = await registerJson(app.origin, "victim@example.com");
  const attacker = await login(
    app.origin,
    "victim@example.com",
    PASSWORD,
    "203.0.113.66",
  );
  assert.equal(attacker.status, 200);
  const attackerToken = attacker.body.token as string;

  flaky!.down = "writes";
  const failed = await changePassword(app.origin, victim.token, PASSWORD);
  assert.equal(failed.status, 503);
  assert.ok(failed.headers.has("retry-after"));
  flaky!.down = false;
  // Nothing changed: the new password does not work, the old one does. (On
  // the code before the fix the hash was written first, and the attacker's
  // session outlived a changed password.)
  assert.equal(
    (await login(app.origin, "victim@example.com", NEW_PASSWORD)).status,
    401,
  );
  assert.equal(
    (await login(app.origin, "victim@example.com", PASSWORD)).status,
    200,
  );

  const changed = await changePassword(app.origin, victim.token, PASSWORD);
  assert.equal(changed.status, 200);
  assert.equal(await me(app.origin, attackerToken), 401, "attacker is out");
  assert.equal(await me(app.origin, victim.token), 401, "so is the old one");
  assert.equal(await me(app.origin, changed.body.token as string), 200);
});

Deno.test("SECURITY item 17: a password change needs the current password", async () => {
  await using app = await startApp();
  const user = await registerJson(app.origin, "cur@example.com");
  const wrong = await changePassword(app.origin, user.token, "not my password");
  assert.equal(wrong.status, 401);
  assert.equal(await me(app.origin, user.token), 200, "nothing was revoked");
  assert.equal(
    (await login(app.origin, "cur@example.com", PASSWORD)).status,
    200,
  );
});

Deno.test("SECURITY item 37: a password change invalidates every earlier token of the subject (cookie and bearer), not other subjects'", async () => {
  await using app = await startApp();
  const user = await registerJson(app.origin, "gen@example.com");
  const other = await registerJson(app.origin, "bystander@example.com");
  const b = new Browser(app.origin);
  const form = await b.post("/login", {
    email: "gen@example.com",
    password: PASSWORD,
  });
  assert.equal(form.status, 303);
  const second = await login(app.origin, "gen@example.com", PASSWORD);
  const changed = await changePassword(app.origin, user.token, PASSWORD);
  assert.equal(changed.status, 200);
  assert.equal(await me(app.origin, user.token), 401);
  assert.equal(await me(app.origin, second.body.token as string), 401);
  const page = await b.fetch("/account");
  assert.equal(page.status, 303, "the cookie session is gone too");
  await page.body?.cancel();
  assert.equal(await me(app.origin, other.token), 200);
});

/** A hasher whose next `verify` waits, after checking, until released. */
class LatchHasher implements PasswordHasher {
  #inner = new Pbkdf2Hasher({ iterations: 1000 });
  #hold = false;
  entered = Promise.withResolvers<void>();
  release = Promise.withResolvers<void>();

  holdNextVerify(): void {
    this.#hold = true;
  }

  hash(password: string): Promise<string> {
    return this.#inner.hash(password);
  }

  async verify(password: string, stored: string): Promise<boolean> {
    const ok = await this.#inner.verify(password, stored);
    if (this.#hold) {
      this.#hold = false;
      this.entered.resolve();
      await this.release.promise;
    }
    return ok;
  }

  needsRehash(stored: string): boolean {
    return this.#inner.needsRehash(stored);
  }
}

Deno.test("hardening finding 2: a login with the old password that overlaps a password change gets no session", async () => {
  const hasher = new LatchHasher();
  // Room beside the held login: the change's own check takes a slot of the
  // hashing bound too.
  await using app = await startApp({
    hasher,
    hashing: { concurrency: 4, reserved: 1 },
  });
  const victim = await registerJson(app.origin, "race@example.com");
  const wrong = await login(app.origin, "race@example.com", "wrong password");

  // The attacker's login reads the old hash and is held inside verify …
  hasher.holdNextVerify();
  const pending = login(
    app.origin,
    "race@example.com",
    PASSWORD,
    "203.0.113.7",
  );
  await hasher.entered.promise;
  // … while the owner changes the password and signs out everywhere.
  const changed = await changePassword(app.origin, victim.token, PASSWORD);
  assert.equal(changed.status, 200);
  hasher.release.resolve();
  const late = await pending;

  // Before the fix: 200 with a token issued after the revokeAll cut-off,
  // which then answered /api/me with 200.
  assert.equal(late.status, 401);
  assert.deepEqual(late.body, wrong.body, "answered as a wrong password");
  assert.equal(
    (await login(app.origin, "race@example.com", NEW_PASSWORD)).status,
    200,
  );
});

Deno.test("SECURITY item 46: verification mail is limited per account and redemption per address, with a generic 429", async () => {
  await using app = await startApp({
    limits: {
      resendPerAccount: { max: 1, windowSeconds: 3600 },
      verifyPerAddress: { max: 3, windowSeconds: 900 },
    },
  });
  const user = await registerJson(app.origin, "mail@example.com");
  const resend = () =>
    api(app.origin, "POST", "/verify/resend", {}, bearer(user.token));
  assert.equal((await resend()).status, 204);
  const sent = app.mail.length;
  const limited = await resend();
  assert.equal(limited.status, 429);
  assert.equal(app.mail.length, sent, "no mail while limited");
  // Redemptions from one address: the three allowed ones fail on a bad
  // token, the fourth is refused before any token is looked at.
  const redeem = (token: string, client = "192.0.2.46") =>
    api(app.origin, "POST", "/verify", { token }, { "x-test-client": client });
  for (let i = 0; i < 3; i++) {
    assert.equal((await redeem(`not-a-token-${i}`)).status, 400);
  }
  const good = new URL(app.lastLink("mail@example.com")).searchParams.get(
    "token",
  )!;
  const refused = await redeem(good);
  assert.equal(refused.status, 429);
  assert.equal(refused.body.error, "rate_limited");
  assert.equal(
    (await api(app.origin, "GET", "/api/me", undefined, bearer(user.token)))
      .body.verified,
    false,
    "the refused redemption changed nothing",
  );
  assert.equal(
    (await api(app.origin, "POST", "/verify", {
      token: good,
      password: "correct horse battery",
    }, { "x-test-client": "192.0.2.47" })).status,
    200,
  );
});

Deno.test("hardening finding 9 (JSON read under any content type): body-reading routes answer 415 for anything but application/json and the two form types, and change nothing", async () => {
  await using app = await startApp();
  const user = await registerJson(app.origin, "ct@example.com");
  const send = (path: string, type: string | null, token?: string) => {
    const headers = new Headers({ accept: "application/json" });
    if (type !== null) headers.set("content-type", type);
    if (token) headers.set("authorization", `Bearer ${token}`);
    return fetch(new URL(path, app.origin), {
      method: "POST",
      headers,
      // A Blob body sends no content type of its own.
      body: new Blob([
        JSON.stringify({
          email: "new-ct@example.com",
          password: PASSWORD,
          text: "a note",
        }),
      ]),
      redirect: "manual",
    });
  };
  for (
    const type of [
      "text/plain",
      "image/png",
      null,
      "application/json-seq",
      "application/jsonx",
      "text/json",
    ]
  ) {
    for (const path of ["/register", "/login", "/api/notes"]) {
      const res = await send(path, type, user.token);
      assert.equal(res.status, 415, `${path} ${type}`);
      const body = await res.json();
      assert.equal(body.error, "unsupported_media_type");
    }
  }
  assert.equal(await app.credentials.findByEmail("new-ct@example.com"), null);
  // The accepted spellings: parameters and any case.
  const ok = await send("/register", "Application/JSON; charset=utf-8");
  assert.equal(ok.status, 201);
  await ok.body?.cancel();
  const form = await fetch(new URL("/login", app.origin), {
    method: "POST",
    headers: { "content-type": "application/x-www-form-urlencoded" },
    body: new URLSearchParams({ email: "ct@example.com", password: PASSWORD }),
    redirect: "manual",
  });
  assert.equal(form.status, 303);
  await form.body?.cancel();
});

Deno.test({
  name:
    "hardening finding 7 (world-readable data): main.ts creates ./data 0700 and the dev secret, libSQL and KV files 0600, and narrows older ones",
  ignore: Deno.build.os === "windows",
  fn: async () => {
    const dir = await Deno.makeTempDir({ prefix: "portcullis-data-" });
    const data = `${dir}/data`;
    try {
      // An install from before the rule: a 0755 folder, a 0644 database.
      await Deno.mkdir(data, { mode: 0o755 });
      await Deno.chmod(data, 0o755);
      await Deno.writeFile(`${data}/app.db`, new Uint8Array(), { mode: 0o644 });
      await Deno.chmod(`${data}/app.db`, 0o644);
      const env: Record<string, string> = {
        DATA_DIR: data,
        PORT: "0",
        NO_COLOR: "1",
      };
      for (const name of ["PATH", "HOME", "DENO_DIR", "XDG_CACHE_HOME"]) {
        const value = Deno.env.get(name);
        if (value !== undefined) env[name] = value;
      }
      const child = new Deno.Command(Deno.execPath(), {
        args: [
          "run",
          "-A",
          new URL("../../examples/app/main.ts", import.meta.url).pathname,
        ],
        clearEnv: true,
        env,
        stdout: "piped",
        stderr: "null",
      }).spawn();
      let out = "";
      const timer = setTimeout(() => child.kill(), 20_000);
      try {
        const decoder = new TextDecoder();
        for await (const chunk of child.stdout) {
          out += decoder.decode(chunk);
          if (out.includes("Listening on")) break;
        }
      } finally {
        clearTimeout(timer);
        child.kill();
        await child.status;
      }
      assert.match(out, /Listening on/);
      const mode = async (p: string) => (await Deno.stat(p)).mode! & 0o777;
      assert.equal(await mode(data), 0o700);
      for (const file of ["dev-secret", "app.db", "kv.sqlite3"]) {
        assert.equal(await mode(`${data}/${file}`), 0o600, file);
      }
      for await (const entry of Deno.readDir(data)) {
        assert.equal(
          (await mode(`${data}/${entry.name}`)) & 0o077,
          0,
          `${entry.name} is private`,
        );
      }
    } finally {
      await Deno.remove(dir, { recursive: true });
    }
  },
});

Deno.test("hardening finding 8 (no HSTS): every answer carries Strict-Transport-Security when the configured origin is https, none when it is http", async () => {
  {
    await using app = await startApp({ appOrigin: "https://app.example" });
    for (const path of ["/", "/login", "/api/me", "/nowhere"]) {
      const res = await fetch(new URL(path, app.origin));
      await res.body?.cancel();
      assert.equal(
        res.headers.get("strict-transport-security"),
        "max-age=31536000",
        path,
      );
    }
  }
  {
    await using app = await startApp();
    const res = await fetch(new URL("/", app.origin));
    await res.body?.cancel();
    assert.equal(res.headers.get("strict-transport-security"), null);
  }
});
