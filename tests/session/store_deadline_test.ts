// Item 36: a session store that errors or does not answer never lets a
// request through, and never holds it forever: every store call runs under
// a deadline, and past it the gates answer 503 with Retry-After.
import assert from "node:assert/strict";
import {
  AuthError,
  compose,
  identityMiddleware,
  type KeyValueStore,
  KVSessionStore,
  MemoryKV,
  requireAuth,
  SecretProvider,
  SessionManager,
} from "../../mod.ts";
import { SECRET } from "./_helpers.ts";

/** A real MemoryKV that can be made to hang: its calls then never settle. */
class HangingKV implements KeyValueStore {
  hanging = false;
  calls = 0;
  #inner = new MemoryKV();
  #pending: (() => void)[] = [];

  #maybeHang<T>(f: () => Promise<T>): Promise<T> {
    this.calls++;
    if (!this.hanging) return f();
    // Never settles while hanging; released at the end of the test.
    return new Promise<T>((resolve) =>
      this.#pending.push(() => f().then(resolve))
    );
  }
  release(): void {
    for (const p of this.#pending.splice(0)) p();
  }
  getMany(keys: readonly string[]) {
    return this.#maybeHang(() => this.#inner.getMany(keys));
  }
  put(key: string, value: string, options?: { ttlSeconds?: number }) {
    return this.#maybeHang(() => this.#inner.put(key, value, options));
  }
  delete(key: string) {
    return this.#maybeHang(() => this.#inner.delete(key));
  }
}

function setup(storeTimeoutMs: number) {
  const kv = new HangingKV();
  const sessions = new SessionManager({
    secret: SecretProvider.fromValue(SECRET),
    store: new KVSessionStore(kv),
    storeTimeoutMs,
  });
  const app = compose(
    [identityMiddleware(sessions, { onEvent: () => {} }), requireAuth()],
    () => new Response("the protected resource"),
  );
  return { kv, sessions, app };
}

Deno.test("item 36: a hanging store answers 503 with Retry-After within the deadline, never the resource", async () => {
  const { kv, sessions, app } = setup(80);
  const token = await sessions.issue("user_1");
  const ok = await app(
    new Request("https://app.example/me", {
      headers: { authorization: `Bearer ${token}` },
    }),
  );
  assert.equal(ok.status, 200, "the store answers: signed in");
  await ok.body?.cancel();

  kv.hanging = true;
  const started = performance.now();
  const res = await app(
    new Request("https://app.example/me", {
      headers: { authorization: `Bearer ${token}` },
    }),
  );
  const elapsed = performance.now() - started;
  assert.equal(res.status, 503);
  assert.equal(res.headers.get("retry-after"), "5");
  assert.doesNotMatch(await res.text(), /protected resource/);
  assert.ok(elapsed >= 70, `waited for the deadline: ${elapsed} ms`);
  assert.ok(elapsed < 1000, `did not hang: ${elapsed} ms`);
  kv.release();
});

Deno.test("item 36: resolve() and revoke() reject with STORE_UNAVAILABLE, reason timeout, when the store hangs", async () => {
  const { kv, sessions } = setup(50);
  const token = await sessions.issue("user_1");
  kv.hanging = true;
  for (
    const call of [
      () => sessions.resolve(token),
      () => sessions.revoke(token),
      () => sessions.revokeAll("user_1"),
    ]
  ) {
    await assert.rejects(call, (error) => {
      assert.ok(error instanceof AuthError);
      assert.equal(error.code, "STORE_UNAVAILABLE");
      assert.equal(error.reason, "timeout");
      return true;
    });
  }
  kv.release();
});

Deno.test("item 36: a store that throws gives STORE_UNAVAILABLE with reason failed, and the request 503", async () => {
  const broken: KeyValueStore = {
    getMany: () => Promise.reject(new Error("connection reset")),
    put: () => Promise.reject(new Error("connection reset")),
    delete: () => Promise.reject(new Error("connection reset")),
  };
  const sessions = new SessionManager({
    secret: SecretProvider.fromValue(SECRET),
    store: new KVSessionStore(broken),
  });
  const token = await sessions.issue("user_1");
  await assert.rejects(() => sessions.resolve(token), (error) => {
    assert.ok(error instanceof AuthError);
    assert.equal(error.reason, "failed");
    return true;
  });
  const app = compose(
    [identityMiddleware(sessions, { onEvent: () => {} }), requireAuth()],
    () => new Response("the protected resource"),
  );
  const res = await app(
    new Request("https://app.example/me", {
      headers: { authorization: `Bearer ${token}` },
    }),
  );
  assert.equal(res.status, 503);
  await res.body?.cancel();
});

Deno.test("storeTimeoutMs must be a positive number of milliseconds", () => {
  for (const storeTimeoutMs of [0, -1, Number.NaN]) {
    assert.throws(
      () =>
        new SessionManager({
          secret: SecretProvider.fromValue(SECRET),
          store: new KVSessionStore(new MemoryKV()),
          storeTimeoutMs,
        }),
      RangeError,
    );
  }
});

Deno.test("item 36: after fast calls, the shared timer still bounds a call that hangs", async () => {
  const { kv, sessions, app } = setup(300);
  const token = await sessions.issue("user_1");
  const bearer = { authorization: `Bearer ${token}` };
  // Many fast calls: the timer armed by the first stays, unref'd, and is
  // not re-armed per call.
  for (let i = 0; i < 50; i++) {
    const ok = await app(
      new Request("https://app.example/", { headers: bearer }),
    );
    assert.equal(ok.status, 200);
    await ok.body?.cancel();
  }
  kv.hanging = true;
  const started = performance.now();
  const res = await app(
    new Request("https://app.example/", { headers: bearer }),
  );
  const waited = performance.now() - started;
  assert.equal(res.status, 503);
  assert.equal(await res.text().then((t) => t.includes("protected")), false);
  // Bounded by the deadline (300 ms), not by a stale timer or none at all.
  assert.ok(waited < 5_000, `waited ${waited} ms`);
  kv.release();
});

Deno.test("item 36: an idle process is not held open by the deadline's timer", async () => {
  // A script that resolves a token against a fast store under a 60 s
  // deadline and then has nothing left to do must exit at once, not when
  // the timer would fire.
  const script = `
    import { KVSessionStore, MemoryKV, SecretProvider, SessionManager } from ${
    JSON.stringify(new URL("../../mod.ts", import.meta.url).href)
  };
    const sessions = new SessionManager({
      secret: SecretProvider.fromValue(${JSON.stringify(SECRET)}),
      store: new KVSessionStore(new MemoryKV()),
      storeTimeoutMs: 60_000,
    });
    const token = await sessions.issue("user_1");
    for (let i = 0; i < 3; i++) await sessions.resolve(token);
    await sessions.revoke(token);
    console.log(await sessions.resolve(token) === null ? "revoked" : "live");
  `;
  const started = performance.now();
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["eval", "--no-check", script],
    stdout: "piped",
    stderr: "piped",
  }).output();
  const seconds = (performance.now() - started) / 1000;
  assert.equal(out.code, 0, new TextDecoder().decode(out.stderr));
  assert.equal(new TextDecoder().decode(out.stdout).trim(), "revoked");
  assert.ok(seconds < 40, `the process lived ${seconds.toFixed(1)} s`);
});
