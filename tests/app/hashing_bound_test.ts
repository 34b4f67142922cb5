/**
 * Issue 27, "CPU by hashing" (weak spot): every anonymous sign-in costs one
 * slow hash, so a flood from fresh addresses slowed legitimate sign-ins
 * 2.6–4×. The app bounds hashing: past the slots and the queue, sign-in
 * and registration answer 503 with `Retry-After` (JSON and page), and a
 * browser with a trusted-device cookie still signs in through the reserved
 * slot. Every other password check (a change's current password, the
 * re-check, a link confirmed with the password) runs inside the same
 * bound. The speed under a 64-address flood is measured by
 * `bench/hashing_flood.ts`.
 *
 * @module
 */
import assert from "node:assert/strict";
import type { PasswordHasher } from "../../mod.ts";
import { Pbkdf2Hasher } from "../../lib/authn/pbkdf2_hasher.ts";
import { HashingGate } from "../../packages/accounts/mod.ts";
import { api, bearer, Browser, registerJson, startApp } from "./_harness.ts";

const OWNER = "owner@example.com";
const PASSWORD = "correct horse battery";
const MESSAGE =
  "Too many passwords are being checked right now: try again in a few seconds";

/** A hasher whose work on passwords starting with "flood" waits for the test. */
class HeldHasher implements PasswordHasher {
  #inner = new Pbkdf2Hasher({ iterations: 1000 });
  #open = Promise.withResolvers<void>();
  held = 0;
  /** Whether it holds now (a test may let its set-up through first). */
  holding = true;
  release(): void {
    this.#open.resolve();
  }
  async #maybeHold(password: string): Promise<void> {
    if (!this.holding || !password.startsWith("flood")) return;
    this.held++;
    await this.#open.promise;
  }
  async hash(password: string): Promise<string> {
    await this.#maybeHold(password);
    return await this.#inner.hash(password);
  }
  async verify(password: string, stored: string): Promise<boolean> {
    await this.#maybeHold(password);
    return await this.#inner.verify(password, stored);
  }
  needsRehash(stored: string): boolean {
    return this.#inner.needsRehash(stored);
  }
}

async function until(check: () => boolean): Promise<void> {
  for (let i = 0; i < 500 && !check(); i++) {
    await new Promise((r) => setTimeout(r, 10));
  }
  assert.ok(check(), "timed out");
}

Deno.test("issue 27 (CPU by hashing): past the hashing bound, sign-in and registration answer 503 with Retry-After, as JSON and as a page; a trusted browser still signs in", async () => {
  const hasher = new HeldHasher();
  const gate = new HashingGate({ concurrency: 2, reserved: 1, queue: 1 });
  await using app = await startApp({ hasher, hashing: gate });
  await registerJson(app.origin, OWNER, PASSWORD);
  // The owner's browser signs in once: it is trusted from now on.
  const owner = new Browser(app.origin);
  const first = await owner.post("/login", {
    email: OWNER,
    password: PASSWORD,
  });
  assert.equal(first.status, 303);
  await first.body?.cancel();
  assert.ok(
    [...owner.cookies.keys()].some((name) => name.endsWith("device")),
    "the browser holds a device cookie",
  );
  await owner.post("/logout", {}).then((r) => r.body?.cancel());

  const json = (path: string, body: unknown, client: string) =>
    fetch(app.origin + path, {
      method: "POST",
      headers: {
        "content-type": "application/json",
        accept: "application/json",
        "x-test-client": client,
      },
      body: JSON.stringify(body),
    });
  // A flood from fresh addresses: one hashes, one waits in the queue.
  const flood = [1, 2].map((i) =>
    json("/login", {
      email: `nobody${i}@example.com`,
      password: `flood password ${i}`,
    }, `203.0.113.${i}`)
  );
  await until(() => gate.running === 1 && gate.waiting === 1);

  const refused = await json("/login", {
    email: "nobody3@example.com",
    password: "flood password 3",
  }, "203.0.113.3");
  assert.equal(refused.status, 503);
  assert.equal(refused.headers.get("retry-after"), "2");
  assert.deepEqual(await refused.json(), { error: "busy", message: MESSAGE });
  // The owner's password from a client without the device cookie waits its
  // turn like anyone: refused as well.
  const bare = await json(
    "/login",
    { email: OWNER, password: PASSWORD },
    "198.51.100.9",
  );
  assert.equal(bare.status, 503);
  await bare.body?.cancel();

  const form = await new Browser(app.origin).post("/login", {
    email: "nobody4@example.com",
    password: "flood password 4",
  });
  assert.equal(form.status, 503);
  assert.equal(form.headers.get("retry-after"), "2");
  assert.match(form.headers.get("content-type") ?? "", /text\/html/);
  const page = await form.text();
  assert.ok(page.includes(MESSAGE), "the login page says why");
  assert.ok(page.includes('name="email"'), "with the form again");

  const register = await json("/register", {
    email: "newcomer@example.com",
    password: "flood password 5",
  }, "203.0.113.5");
  assert.equal(register.status, 503);
  assert.equal(register.headers.get("retry-after"), "2");
  assert.deepEqual(await register.json(), { error: "busy", message: MESSAGE });
  const registerForm = await new Browser(app.origin).post("/register", {
    email: "newcomer@example.com",
    password: "flood password 5",
  });
  assert.equal(registerForm.status, 503);
  assert.ok((await registerForm.text()).includes(MESSAGE));
  assert.equal(
    await app.credentials.findByEmail("newcomer@example.com"),
    null,
    "nothing was registered",
  );

  // The trusted browser takes the reserved slot while the flood holds.
  const trusted = await owner.post("/login", {
    email: OWNER,
    password: PASSWORD,
  });
  assert.equal(trusted.status, 303, "the owner's browser signs in");
  await trusted.body?.cancel();
  assert.equal(hasher.held, 1, "the queued flood request still waits");

  hasher.release();
  for (const res of await Promise.all(flood)) {
    assert.equal(res.status, 401);
    await res.body?.cancel();
  }
  assert.equal(gate.running, 0);
  assert.equal(gate.waiting, 0);
});

Deno.test("issue 27, third and fourth outside reviews: every password check runs inside the bound; the signed-in owner's (a change's current password, the re-check) in the trusted lane, so an anonymous flood does not refuse them, and a link confirmed with the password in the anonymous lane (503, nothing spent)", async () => {
  const hasher = new HeldHasher();
  const gate = new HashingGate({ concurrency: 2, reserved: 1, queue: 1 });
  await using app = await startApp({ hasher, hashing: gate });
  const { token } = await registerJson(app.origin, OWNER, PASSWORD);
  const link = new URL(app.lastLink(OWNER));
  // The owner's browser signs in once: it is trusted from now on.
  const owner = new Browser(app.origin);
  const first = await owner.post("/login", {
    email: OWNER,
    password: PASSWORD,
  });
  assert.equal(first.status, 303);
  await first.body?.cancel();

  // The anonymous lane is full: one flood hash runs, one waits.
  const flood = [1, 2].map((i) =>
    api(app.origin, "POST", "/login", {
      email: `nobody${i}@example.com`,
      password: `flood password ${i}`,
    }, { "x-test-client": `203.0.113.${i}` })
  );
  await until(() => gate.running === 1 && gate.waiting === 1);

  // A link confirmed with the password: anyone may hold one, so it waits
  // its turn in the anonymous lane like a sign-in, and nothing is spent.
  const verify = await api(app.origin, "POST", "/verify", {
    token: link.searchParams.get("token"),
    password: PASSWORD,
  }, { "x-test-client": "198.51.100.7" });
  assert.equal(verify.status, 503);
  assert.equal(verify.headers.get("retry-after"), "2");
  assert.deepEqual(verify.body, { error: "busy", message: MESSAGE });
  // The signed-in owner's checks run in the trusted lane, beside the flood:
  // each password is checked (a wrong one is 401, not 503).
  const remove = await api(app.origin, "POST", "/account/delete", {
    password: "not the password",
  }, bearer(token));
  assert.equal(remove.status, 401);
  const wrongChange = await api(app.origin, "POST", "/account/password", {
    currentPassword: "not the password",
    newPassword: "a brand new passphrase for this test",
  }, bearer(token));
  assert.equal(wrongChange.status, 401);
  // The owner's trusted browser still signs in through the reserve.
  const trusted = await owner.post("/login", {
    email: OWNER,
    password: PASSWORD,
  });
  assert.equal(trusted.status, 303);
  await trusted.body?.cancel();
  const NEW = "a brand new passphrase for this test";
  const change = await api(app.origin, "POST", "/account/password", {
    currentPassword: PASSWORD,
    newPassword: NEW,
  }, bearer(token));
  assert.equal(change.status, 200, "the owner changes the password");
  assert.equal(hasher.held, 1, "the queued flood request still waits");

  hasher.release();
  for (const res of await Promise.all(flood)) assert.equal(res.status, 401);
  // The link was not spent by its 503.
  const user = await app.credentials.findByEmail(OWNER);
  assert.ok(user, "the account is still there");
  assert.equal(user.verifiedAt, 0, "the address is not proven yet");
  const again = await api(app.origin, "POST", "/verify", {
    token: link.searchParams.get("token"),
    password: NEW,
  }, { "x-test-client": "198.51.100.7" });
  assert.equal(again.status, 200, "the link still works");
  assert.equal(gate.running, 0);
});

Deno.test("fourth outside review: a reset takes its slot of the bound before the link is spent (503, the link still works), and a re-check the bound would refuse answers 503 before its limits count it", async () => {
  const hasher = new HeldHasher();
  hasher.holding = false;
  const gate = new HashingGate({ concurrency: 2, reserved: 1, queue: 0 });
  await using app = await startApp({ hasher, hashing: gate });
  // The owner's password starts like the flood's: the test holds its hash.
  const HELD = "flood of an owner's own, long enough";
  const { token } = await registerJson(app.origin, OWNER, HELD);
  await api(app.origin, "POST", "/password/forgot", { email: OWNER });
  const link = new URL(await app.awaitLink(OWNER, 2));
  assert.equal(link.pathname, "/password/reset");
  hasher.holding = true;

  // The anonymous lane is full (one hash, no queue): the reset is refused
  // before the link is spent.
  const flood = api(app.origin, "POST", "/login", {
    email: "nobody@example.com",
    password: "flood password",
  }, { "x-test-client": "203.0.113.1" });
  await until(() => gate.running === 1);
  const NEW = "the owner's new passphrase";
  const reset = await api(app.origin, "POST", "/password/reset", {
    token: link.searchParams.get("token"),
    password: NEW,
  });
  assert.equal(reset.status, 503);
  assert.deepEqual(reset.body, { error: "busy", message: MESSAGE });

  // Twelve re-checks of the owner's at once: one takes the account's slot
  // (its hash is held), the other eleven answer 503, and the re-check's
  // limit (10 in 15 minutes) counts none of them.
  let refused = 0;
  const rechecks = Array.from(
    { length: 12 },
    () =>
      api(app.origin, "POST", "/account/delete", {
        password: "flood, but not the owner's",
      }, bearer(token)).then((res) => {
        if (res.status === 503) refused++;
        return res;
      }),
  );
  // Every one has been answered but the one whose hash is held.
  await until(() => gate.running === 2 && refused === 11);
  hasher.release();
  const statuses = (await Promise.all(rechecks)).map((r) => r.status).sort();
  assert.deepEqual(statuses, [401, ...Array(11).fill(503)]);
  assert.equal((await flood).status, 401);
  const after = await api(app.origin, "POST", "/account/delete", {
    password: "a wrong one",
  }, bearer(token));
  assert.equal(after.status, 401, "checked: the 503s counted nothing");

  // The link was not spent by its 503: it resets the password now.
  const again = await api(app.origin, "POST", "/password/reset", {
    token: link.searchParams.get("token"),
    password: NEW,
  });
  assert.equal(again.status, 200);
});

Deno.test("fifth outside review: a password change takes the account's slot of the bound before its limits count it: twelve at once get one check and eleven 503s, and the change's limit (10 in 15 minutes) counts only the one checked", async () => {
  const hasher = new HeldHasher();
  hasher.holding = false;
  const gate = new HashingGate({ concurrency: 2, reserved: 1, queue: 0 });
  await using app = await startApp({ hasher, hashing: gate });
  const { token } = await registerJson(app.origin, OWNER, PASSWORD);
  hasher.holding = true;
  const NEW = "a brand new passphrase for this test";
  let refused = 0;
  const changes = Array.from(
    { length: 12 },
    () =>
      api(app.origin, "POST", "/account/password", {
        currentPassword: "flood, but not the owner's",
        newPassword: NEW,
      }, bearer(token)).then((res) => {
        if (res.status === 503) refused++;
        return res;
      }),
  );
  // Every one has been answered but the one whose hash is held.
  await until(() => hasher.held === 1 && refused === 11);
  hasher.release();
  const answers = await Promise.all(changes);
  assert.deepEqual(answers.map((r) => r.status).sort(), [
    401,
    ...Array(11).fill(503),
  ]);
  const busy = answers.find((r) => r.status === 503)!;
  assert.equal(busy.headers.get("retry-after"), "2");
  assert.deepEqual(busy.body, { error: "busy", message: MESSAGE });
  // Nine more wrong passwords are checked (401): the 503s counted nothing.
  for (let i = 0; i < 9; i++) {
    const wrong = await api(app.origin, "POST", "/account/password", {
      currentPassword: `wrong ${i}`,
      newPassword: NEW,
    }, bearer(token));
    assert.equal(wrong.status, 401, `wrong password ${i + 1} after the 503s`);
  }
  const limited = await api(app.origin, "POST", "/account/password", {
    currentPassword: PASSWORD,
    newPassword: NEW,
  }, bearer(token));
  assert.equal(limited.status, 429, "the tenth counted attempt is the limit");
  assert.equal(gate.running, 0);
});

Deno.test("fifth outside review: past the bound, a sign-in with a device cookie the account does not trust (forged, or another account's) is refused as early as one without, and the login throttle counts none of its 503s", async () => {
  const hasher = new HeldHasher();
  const gate = new HashingGate({ concurrency: 2, reserved: 1, queue: 0 });
  await using app = await startApp({ hasher, hashing: gate });
  await registerJson(app.origin, OWNER, PASSWORD);
  // Another account's browser holds a device cookie of its own.
  const other = new Browser(app.origin);
  await registerJson(app.origin, "other@example.com", PASSWORD);
  const signedIn = await other.post("/login", {
    email: "other@example.com",
    password: PASSWORD,
  });
  assert.equal(signedIn.status, 303);
  await signedIn.body?.cancel();
  const foreign = other.cookies.get("__Host-device");
  assert.ok(foreign, "the other account's device cookie");

  // The anonymous lane is full: one flood hash runs, none may wait.
  const flood = api(app.origin, "POST", "/login", {
    email: "nobody@example.com",
    password: "flood password",
  }, { "x-test-client": "203.0.113.1" });
  await until(() => gate.running === 1);
  // Six sign-ins to the owner's account from one address (the delays
  // start after three failures), each with a cookie the account does not
  // trust: refused at once, before the throttle.
  for (const cookie of ["forged", "", foreign, "forged", foreign, "x.y.z"]) {
    const res = await api(app.origin, "POST", "/login", {
      email: OWNER,
      password: "not the password",
    }, { "x-test-client": "198.51.100.9", cookie: `__Host-device=${cookie}` });
    assert.equal(res.status, 503);
    assert.equal(gate.waiting, 0, "nothing waits");
  }
  hasher.release();
  assert.equal((await flood).status, 401);
  // Nothing was counted: the owner's right password from that address
  // signs in at once (six counted failures would hold it for seconds).
  const owner = await api(app.origin, "POST", "/login", {
    email: OWNER,
    password: PASSWORD,
  }, { "x-test-client": "198.51.100.9" });
  assert.equal(owner.status, 200);
});

Deno.test("fifth outside review, re-test: a sign-in holds its place in the bound while the throttle counts it, so two sign-ins racing for the last place count one failure, not two (one is refused before it is counted)", async () => {
  const hasher = new HeldHasher();
  const gate = new HashingGate({ concurrency: 2, reserved: 1, queue: 1 });
  await using app = await startApp({ hasher, hashing: gate });
  await registerJson(app.origin, OWNER, PASSWORD);
  // One flood hash runs: the anonymous lane has one place left.
  const flood = api(app.origin, "POST", "/login", {
    email: "nobody@example.com",
    password: "flood password",
  }, { "x-test-client": "203.0.113.1" });
  await until(() => gate.running === 1);
  // Two wrong sign-ins to the owner's account from one address, at once.
  const racing = [1, 2].map(() =>
    api(app.origin, "POST", "/login", {
      email: OWNER,
      password: "flood, not the owner's",
    }, { "x-test-client": "198.51.100.9" })
  );
  await until(() => gate.waiting === 1);
  hasher.release();
  const statuses = (await Promise.all(racing)).map((r) => r.status).sort();
  assert.deepEqual(statuses, [401, 503]);
  assert.equal((await flood).status, 401);
  // One failure was counted; with a second one more, the delays (after
  // three in a row) have not started: the owner's right password signs in.
  const wrong = await api(app.origin, "POST", "/login", {
    email: OWNER,
    password: "another wrong one",
  }, { "x-test-client": "198.51.100.9" });
  assert.equal(wrong.status, 401);
  const owner = await api(app.origin, "POST", "/login", {
    email: OWNER,
    password: PASSWORD,
  }, { "x-test-client": "198.51.100.9" });
  assert.equal(owner.status, 200, "two failures counted, not three");
});
