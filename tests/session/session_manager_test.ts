import assert from "node:assert/strict";
import {
  AuthError,
  KVSessionStore,
  MemoryKV,
  SecretProvider,
  SessionManager,
} from "../../mod.ts";
import { signToken } from "../../lib/tokens/signed_token.ts";
import type { KeyValueStore } from "../../mod.ts";
import type { SessionManagerOptions } from "../../lib/session/mod.ts";
import {
  Clock,
  decodePayload,
  makeManager,
  OLD_SECRET,
  SECRET,
} from "./_helpers.ts";

Deno.test("issue() mints a versioned, key-identified token that resolve() accepts", async () => {
  const { sessions, clock } = makeManager();
  const token = await sessions.issue("user_1");
  assert.match(
    token,
    /^v1\.[A-Za-z0-9_-]{8}\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]{43}$/,
  );
  const id = await sessions.resolve(token);
  assert.equal(id?.subject, "user_1");
  assert.equal(id?.expiresAt, clock.ms / 1000 + 7 * 24 * 3600);
  assert.equal(id?.issuedAt, clock.ms);
});

Deno.test("the payload is subject|jti|expiry with a jti of 128+ random bits leading with the issue time (item 23)", async () => {
  const { sessions, clock } = makeManager();
  const token = await sessions.issue("user_1");
  const [subject, jti, expiry] = decodePayload(token).split("|");
  assert.equal(subject, "user_1");
  assert.match(jti, /^[A-Za-z0-9_-]{30}$/);
  assert.equal(expiry, String(clock.ms / 1000 + 604800));
  // Two tokens issued in the same millisecond differ in their random part.
  const other = decodePayload(await sessions.issue("user_1")).split("|")[1];
  assert.notEqual(other, jti);
  assert.equal(other.slice(0, 8), jti.slice(0, 8));
});

Deno.test("login always issues a new jti (item 16)", async () => {
  const { sessions } = makeManager();
  const jtis = new Set<string>();
  for (let i = 0; i < 50; i++) {
    jtis.add((await sessions.resolve(await sessions.issue("u")))!.jti);
  }
  assert.equal(jtis.size, 50);
});

Deno.test("issue() rejects subjects that are empty, hold | or control characters, or exceed 255 bytes", async () => {
  const { sessions } = makeManager();
  for (
    const bad of [
      "",
      "a|b",
      "a\nb",
      "a\u0000",
      "tab\t",
      "\u007f",
      "\u0085",
      "é".repeat(128),
    ]
  ) {
    await assert.rejects(
      () => sessions.issue(bad),
      (e: unknown) => e instanceof AuthError && e.code === "INVALID_SUBJECT",
      JSON.stringify(bad),
    );
  }
  // 255 bytes exactly is fine, as is any other printable Unicode.
  assert.ok(await sessions.issue("x".repeat(255)));
  assert.ok(await sessions.issue("usér ✓ 用户"));
});

Deno.test("item 22: a token is rejected once now ≥ expiry", async () => {
  const { sessions, clock } = makeManager({ lifetimeSeconds: 60 });
  const token = await sessions.issue("u");
  clock.advance(59.999);
  assert.ok(await sessions.resolve(token));
  clock.advance(0.001);
  assert.equal(await sessions.resolve(token), null);
  clock.advance(3600);
  assert.equal(await sessions.resolve(token), null);
});

Deno.test("a cached (warm) token still expires and still checks the denylist", async () => {
  const { sessions, clock } = makeManager({ lifetimeSeconds: 60 });
  const token = await sessions.issue("u");
  assert.ok(await sessions.resolve(token)); // now cached
  assert.ok(await sessions.resolve(token));
  await sessions.revoke(token);
  assert.equal(await sessions.resolve(token), null);
  const t2 = await sessions.issue("u");
  assert.ok(await sessions.resolve(t2));
  clock.advance(60);
  assert.equal(await sessions.resolve(t2), null);
});

Deno.test("item 24: a token minted for another purpose with the same secret never passes as a session", async () => {
  const { sessions } = makeManager();
  const secret = SecretProvider.fromValue(SECRET);
  const jti = decodePayload(await sessions.issue("u")).split("|")[1];
  const payload = new TextEncoder().encode(`u|${jti}|${2 ** 40}`);
  for (const purpose of ["verification", "flash", "Session", "session "]) {
    const keys = await secret.keys(purpose);
    const foreign = await signToken(keys.current, purpose, payload);
    assert.equal(await sessions.resolve(foreign), null, purpose);
  }
  // With the session key but another purpose label in the MAC input: refused.
  const sessionKeys = await secret.keys("session");
  const relabelled = await signToken(
    sessionKeys.current,
    "verification",
    payload,
  );
  assert.equal(await sessions.resolve(relabelled), null);
});

Deno.test("item 21: strict payload: malformed fields never resolve even with a valid MAC", async () => {
  const { sessions } = makeManager();
  const keys = await SecretProvider.fromValue(SECRET).keys("session");
  const good = decodePayload(await sessions.issue("u")).split("|");
  const jti = good[1];
  const cases = [
    `u|${jti}|0`,
    `u|${jti}|NaN`,
    `u|${jti}|1e9`,
    `u|${jti}|+1999999999`,
    `u|${jti}| 1999999999`,
    `u|${jti}|1999999999 `,
    `u|${jti}|`,
    `u|${jti}|-1`,
    `u|${jti}|0x10`,
    `u|${jti}|01999999999`,
    `u|${jti}|abc`,
    `u|${jti}|1e309`,
    `u|${jti}|99999999999999999`,
    `u|${jti}`,
    `u|${jti}|1999999999|extra`,
    `|${jti}|1999999999`,
    `u|short|1999999999`,
    `u|${jti}=|1999999999`,
    `u\n|${jti}|1999999999`,
  ];
  for (const payload of cases) {
    const token = await signToken(
      keys.current,
      "session",
      new TextEncoder().encode(payload),
    );
    assert.equal(await sessions.resolve(token), null, payload);
  }
  // Invalid UTF-8 in the payload.
  const bytes = new Uint8Array([0xff, 0xfe, 0x7c, 0x41]);
  assert.equal(
    await sessions.resolve(await signToken(keys.current, "session", bytes)),
    null,
  );
});

Deno.test("item 20: every single-character change, truncation, extension or padding is rejected", async () => {
  const { sessions } = makeManager();
  const token = await sessions.issue("user_1");
  const alphabet =
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_.=";
  let tried = 0;
  for (let i = 0; i < token.length; i++) {
    for (
      const c of [
        alphabet[(alphabet.indexOf(token[i]) + 1) % alphabet.length],
        "=",
      ]
    ) {
      if (c === token[i]) continue;
      const mutated = token.slice(0, i) + c + token.slice(i + 1);
      assert.equal(await sessions.resolve(mutated), null, mutated);
      tried++;
    }
  }
  assert.ok(tried > 2 * token.length - 5);
  for (
    const mutated of [
      token.slice(0, -1),
      token + "A",
      token + "=",
      token + "==",
      ` ${token}`,
      `${token} `,
      token.replace("v1.", "v2."),
    ]
  ) {
    assert.equal(await sessions.resolve(mutated), null, mutated);
  }
  // Non-canonical base64url: the tag's last character carries 2 unused bits.
  const last = token.at(-1)!;
  const sibling =
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"[
      "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"
        .indexOf(last) ^ 1
    ];
  assert.equal(await sessions.resolve(token.slice(0, -1) + sibling), null);
});

Deno.test("a token longer than 4 KiB is refused before any crypto", async () => {
  const { sessions } = makeManager();
  let verifies = 0;
  const original = crypto.subtle.verify;
  crypto.subtle.verify = (...args: Parameters<typeof original>) => {
    verifies++;
    return original.apply(crypto.subtle, args);
  };
  try {
    const huge = "v1.AAAAAAAA." + "A".repeat(5000) + "." + "A".repeat(43);
    assert.equal(await sessions.resolve(huge), null);
    assert.equal(await sessions.resolve("not a token"), null);
    assert.equal(verifies, 0);
  } finally {
    crypto.subtle.verify = original;
  }
});

Deno.test("item 35: revoke() puts the jti, never the token, on the denylist with TTL max(expiry−now, 60 s)", async () => {
  const clock = new Clock();
  const writes: { key: string; value: string; ttl?: number }[] = [];
  const inner = new MemoryKV({ now: clock.now });
  const kv: KeyValueStore = {
    getMany: (k) => inner.getMany(k),
    put: (key, value, o) => {
      writes.push({ key, value, ttl: o?.ttlSeconds });
      return inner.put(key, value, o);
    },
    delete: (k) => inner.delete(k),
  };
  const sessions = new SessionManager({
    secret: SecretProvider.fromValue(SECRET),
    store: new KVSessionStore(kv),
    now: clock.now,
    lifetimeSeconds: 3600,
  });
  const token = await sessions.issue("u");
  const jti = decodePayload(token).split("|")[1];
  clock.advance(600);
  assert.equal(await sessions.revoke(token), true);
  assert.deepEqual(writes, [{
    key: `portcullis:deny:${jti}`,
    value: "1",
    ttl: 3000,
  }]);
  assert.ok(!JSON.stringify(writes).includes(token));
  assert.equal(await sessions.resolve(token), null);

  const t2 = await sessions.issue("u");
  clock.advance(3590);
  await sessions.revoke(t2);
  assert.equal(
    writes[1].ttl,
    60,
    "at least 60 s, the smallest Cloudflare KV accepts",
  );
  // The denylist entry outlives the token, then vanishes.
  clock.advance(61);
  assert.equal(inner.size >= 0, true);
  assert.deepEqual(await inner.getMany([writes[1].key]), [null]);
  // An expired token needs no entry.
  assert.equal(await sessions.revoke(t2), false);
  assert.equal(writes.length, 2);
  // Garbage revokes nothing.
  assert.equal(await sessions.revoke("garbage"), false);
});

Deno.test("item 37: revokeAll() ends every earlier session of the subject and no later one", async () => {
  const { sessions, clock } = makeManager();
  const a = await sessions.issue("alice");
  clock.advance(1);
  const a2 = await sessions.issue("alice");
  const b = await sessions.issue("bob");
  await sessions.resolve(a); // warm cache must not matter
  await sessions.revokeAll("alice");
  assert.equal(await sessions.resolve(a), null);
  assert.equal(await sessions.resolve(a2), null);
  assert.equal((await sessions.resolve(b))?.subject, "bob");
  // A session issued right after, even within the same millisecond, lives.
  const fresh = await sessions.issue("alice");
  assert.equal((await sessions.resolve(fresh))?.subject, "alice");
  clock.advance(10);
  assert.equal((await sessions.resolve(fresh))?.subject, "alice");
});

Deno.test("revokeAll() seen by another manager sharing the store (another isolate)", async () => {
  const clock = new Clock();
  const kv = new MemoryKV({ now: clock.now });
  const make = () =>
    new SessionManager({
      secret: SecretProvider.fromValue(SECRET),
      store: new KVSessionStore(kv),
      now: clock.now,
    });
  const one = make(), two = make();
  const token = await one.issue("carol");
  assert.ok(await two.resolve(token));
  clock.advance(1);
  await one.revokeAll("carol");
  assert.equal(await two.resolve(token), null);
  await one.revoke(await one.issue("x"));
});

Deno.test("item 36: a store that fails makes resolve() throw STORE_UNAVAILABLE, never answer an identity", async () => {
  let fail = false;
  const inner = new MemoryKV();
  const kv: KeyValueStore = {
    getMany: (k) =>
      fail ? Promise.reject(new Error("ECONNREFUSED")) : inner.getMany(k),
    put: (k, v, o) =>
      fail ? Promise.reject(new Error("ECONNREFUSED")) : inner.put(k, v, o),
    delete: (k) => inner.delete(k),
  };
  const sessions = new SessionManager({
    secret: SecretProvider.fromValue(SECRET),
    store: new KVSessionStore(kv),
  });
  const token = await sessions.issue("u");
  assert.ok(await sessions.resolve(token));
  fail = true;
  for (let i = 0; i < 2; i++) {
    await assert.rejects(
      () => sessions.resolve(token),
      (e: unknown) =>
        e instanceof AuthError && e.code === "STORE_UNAVAILABLE" &&
        !e.message.includes(token),
    );
  }
  await assert.rejects(
    () => sessions.revoke(token),
    (e: unknown) => e instanceof AuthError && e.code === "STORE_UNAVAILABLE",
  );
  await assert.rejects(
    () => sessions.revokeAll("u"),
    (e: unknown) => e instanceof AuthError && e.code === "STORE_UNAVAILABLE",
  );
});

Deno.test("an unreadable per-subject cut-off revokes (fail closed)", async () => {
  const { sessions, kv } = makeManager();
  const token = await sessions.issue("u");
  await kv.put("portcullis:cut:u", "not-a-number");
  assert.equal(await sessions.resolve(token), null);
});

Deno.test("rotation: tokens of a previous secret resolve; once it is removed they do not", async () => {
  const clock = new Clock();
  const kv = new MemoryKV({ now: clock.now });
  const old = new SessionManager({
    secret: SecretProvider.fromValue(OLD_SECRET),
    store: new KVSessionStore(kv),
    now: clock.now,
  });
  const oldToken = await old.issue("u");
  const rotated = new SessionManager({
    secret: SecretProvider.fromValue(SECRET, [OLD_SECRET]),
    store: new KVSessionStore(kv),
    now: clock.now,
  });
  assert.equal((await rotated.resolve(oldToken))?.subject, "u");
  const newToken = await rotated.issue("u");
  assert.notEqual(
    newToken.split(".")[1],
    oldToken.split(".")[1],
    "new tokens carry the new kid",
  );
  const dropped = new SessionManager({
    secret: SecretProvider.fromValue(SECRET),
    store: new KVSessionStore(kv),
    now: clock.now,
  });
  assert.equal(await dropped.resolve(oldToken), null);
  assert.equal((await dropped.resolve(newToken))?.subject, "u");
  // Revocation of an old-key token works during rotation.
  await rotated.revoke(oldToken);
  assert.equal(await rotated.resolve(oldToken), null);
});

Deno.test("a token whose lifetime exceeds the manager's current lifetime is refused", async () => {
  const clock = new Clock();
  const kv = new MemoryKV({ now: clock.now });
  const long = new SessionManager({
    secret: SecretProvider.fromValue(SECRET),
    store: new KVSessionStore(kv),
    now: clock.now,
    lifetimeSeconds: 86400 * 30,
  });
  const token = await long.issue("u");
  const short = new SessionManager({
    secret: SecretProvider.fromValue(SECRET),
    store: new KVSessionStore(kv),
    now: clock.now,
    lifetimeSeconds: 3600,
  });
  assert.equal(await short.resolve(token), null);
});

Deno.test("sliding renewal is opt-in, throttled to one an hour, keeps the jti and is capped by the absolute lifetime", async () => {
  const { sessions: fixed } = makeManager({ lifetimeSeconds: 7200 });
  const f = await fixed.resolve(await fixed.issue("u"));
  assert.equal(await fixed.renew(f!), null);

  const { sessions, clock } = makeManager({
    lifetimeSeconds: 7200,
    sliding: { absoluteLifetimeSeconds: 4 * 3600 },
  });
  const start = clock.ms / 1000;
  const first = await sessions.issue("u");
  const issued = { token: first, identity: (await sessions.resolve(first))! };
  clock.advance(1800);
  assert.equal(
    await sessions.renew(issued.identity),
    null,
    "throttled: under an hour",
  );
  clock.advance(1800);
  const r1 = await sessions.renew(issued.identity);
  assert.ok(r1);
  assert.equal(r1.identity.jti, issued.identity.jti);
  assert.equal(r1.identity.expiresAt, start + 3600 + 7200);
  assert.equal((await sessions.resolve(r1.token))?.subject, "u");
  clock.advance(2 * 3600);
  const r2 = await sessions.renew(r1.identity);
  assert.ok(r2);
  assert.equal(
    r2.identity.expiresAt,
    start + 4 * 3600,
    "capped at the absolute lifetime",
  );
  clock.advance(3600);
  assert.equal(
    await sessions.renew(r2.identity),
    null,
    "no room left under the cap",
  );
  // Revoking a renewed token revokes the whole session (same jti).
  await sessions.revoke(r2.token);
  assert.equal(await sessions.resolve(r1.token), null);
  assert.equal(await sessions.resolve(issued.token), null);
});

Deno.test("misconfiguration throws at construction with a message that says what to do", () => {
  const secret = SecretProvider.fromValue(SECRET);
  assert.throws(
    () => new SessionManager({ secret } as unknown as SessionManagerOptions),
    /store: null to choose stateless/,
  );
  assert.throws(
    () =>
      new SessionManager({ store: null } as unknown as SessionManagerOptions),
    /needs a secret/,
  );
  assert.throws(
    () => new SessionManager({ secret, store: null, lifetimeSeconds: 0 }),
    RangeError,
  );
  assert.throws(
    () => new SessionManager({ secret, store: null, lifetimeSeconds: 1.5 }),
    RangeError,
  );
  assert.throws(
    () =>
      new SessionManager({
        secret,
        store: null,
        lifetimeSeconds: 7200,
        sliding: { absoluteLifetimeSeconds: 60 },
      }),
    RangeError,
  );
});

Deno.test("the stateless path is explicit: tokens resolve, and revoke() says a store is needed", async () => {
  const sessions = new SessionManager({
    secret: SecretProvider.fromValue(SECRET),
    store: null,
  });
  const token = await sessions.issue("u");
  assert.equal((await sessions.resolve(token))?.subject, "u");
  assert.equal(sessions.revocable, false);
  await assert.rejects(() => sessions.revoke(token), /needs a session store/);
});

Deno.test("the verified-token cache is bounded", async () => {
  const { sessions } = makeManager({ cacheSize: 3 });
  const tokens = await Promise.all(
    ["a", "b", "c", "d", "e"].map((s) => sessions.issue(s)),
  );
  for (const t of tokens) assert.ok(await sessions.resolve(t));
  for (const t of tokens) {
    assert.ok(await sessions.resolve(t), "evicted tokens verify again");
  }
  const { sessions: off } = makeManager({ cacheSize: 0 });
  const t = await off.issue("z");
  assert.ok(await off.resolve(t));
  assert.ok(await off.resolve(t));
});

Deno.test("many tokens resolved at once each get their own answer (the MAC check reuses scratch bytes)", async () => {
  const { sessions } = makeManager({ cacheSize: 0 });
  const subjects = Array.from({ length: 200 }, (_, i) => `user_${i}`);
  const tokens = await Promise.all(subjects.map((s) => sessions.issue(s)));
  // Every other token is tampered with in its last payload character.
  const presented = tokens.map((t, i) => {
    if (i % 2 === 0) return t;
    const parts = t.split(".");
    const p = parts[2];
    parts[2] = p.slice(0, -2) + (p.at(-2) === "A" ? "B" : "A") + p.at(-1);
    return parts.join(".");
  });
  const results = await Promise.all(presented.map((t) => sessions.resolve(t)));
  results.forEach((identity, i) => {
    assert.equal(
      identity?.subject ?? null,
      i % 2 === 0 ? subjects[i] : null,
      String(i),
    );
  });
});
