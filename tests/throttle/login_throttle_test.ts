/**
 * The library throttle (`lib/throttle`) on every key-value store with an
 * atomic increment that runs here: MemoryKV, Deno KV, libSQL KV (a file)
 * Upstash (the real `@upstash/redis` client through the REST bridge to
 * the Redis on 127.0.0.1:6379) and Redis (`RedisKV` over node-redis, same
 * server). One suite, the same assertions per store.
 */
import assert from "node:assert/strict";
import { createClient } from "@libsql/client";
import { createClient as createRedisClient } from "@redis/client";
import { RedisKV } from "../../stores/redis/mod.ts";
import { DenoKV, MemoryKV, SecretProvider } from "../../mod.ts";
import { signToken, verifyToken } from "../../lib/tokens/tokens.ts";
import { LibsqlKV } from "../../stores/libsql_kv/mod.ts";
import { UpstashKV } from "../../stores/upstash/mod.ts";
import {
  type DeviceTokenSigner,
  LoginThrottle,
  type LoginThrottleOptions,
  SlidingWindowLimiter,
  type ThrottleStore,
} from "../../lib/throttle/mod.ts";
import { requireTcp } from "../support/services.ts";
import { startUpstashBridge } from "../support/upstash_bridge.ts";

interface Backend {
  store: ThrottleStore;
  close: () => Promise<void>;
}

const BACKENDS: {
  name: string;
  open: () => Promise<Backend | null>;
}[] = [
  {
    name: "MemoryKV",
    open: () =>
      Promise.resolve({
        store: new MemoryKV(),
        close: () => Promise.resolve(),
      }),
  },
  {
    name: "Deno KV",
    open: async () => {
      const kv = await Deno.openKv(":memory:");
      return {
        store: new DenoKV(kv),
        close: () => Promise.resolve(kv.close()),
      };
    },
  },
  {
    name: "libSQL KV (file)",
    open: async () => {
      const dir = await Deno.makeTempDir({ prefix: "portcullis-throttle-" });
      const client = createClient({ url: `file:${dir}/kv.db` });
      return {
        store: new LibsqlKV(client),
        close: async () => {
          client.close();
          await Deno.remove(dir, { recursive: true });
        },
      };
    },
  },
  {
    name: "Upstash (REST bridge to Redis)",
    open: async () => {
      if (!(await requireTcp("Redis", 6379))) return null;
      const bridge = startUpstashBridge();
      return {
        store: new UpstashKV({ url: bridge.url, token: bridge.token }),
        close: () => bridge.close(),
      };
    },
  },
  {
    name: "Redis (RedisKV over node-redis)",
    open: async () => {
      if (!(await requireTcp("Redis", 6379))) return null;
      const client = createRedisClient({
        socket: { host: "127.0.0.1", port: 6379 },
      });
      await client.connect();
      return {
        store: new RedisKV(client),
        close: async () => {
          await client.close();
        },
      };
    },
  },
];

/** A clock the tests move by hand, starting on a minute boundary. */
function clock() {
  let t = (Math.floor(Date.now() / 60_000) + 1) * 60_000;
  return { now: () => t, advance: (seconds: number) => t += seconds * 1000 };
}

function storeTest(
  name: string,
  fn: (store: ThrottleStore, prefix: string) => Promise<void>,
): void {
  for (const backend of BACKENDS) {
    Deno.test({
      name: `${name} (${backend.name})`,
      sanitizeOps: false,
      sanitizeResources: false,
      fn: async () => {
        const opened = await backend.open();
        if (opened === null) return;
        try {
          // A fresh prefix per run: the Redis behind Upstash is shared.
          await fn(opened.store, `t${crypto.randomUUID().slice(0, 8)}:`);
        } finally {
          await opened.close();
        }
      },
    });
  }
}

function throttle(
  store: ThrottleStore,
  prefix: string,
  c: ReturnType<typeof clock>,
  options: Partial<LoginThrottleOptions> = {},
): LoginThrottle {
  // Counters live 10 minutes in the store (real time), so the shared Redis
  // behind Upstash and RedisKV is not left holding them for 30 days.
  return new LoginThrottle({
    store,
    prefix,
    now: c.now,
    memorySeconds: 600,
    ...options,
  });
}

storeTest(
  "SECURITY item 45: a hard stop at 100 consecutive failures per account, from any addresses, that only reset() lifts",
  async (store, prefix) => {
    const c = clock();
    const t = throttle(store, prefix, c, {
      perAddress: { max: 10_000, windowSeconds: 60 },
    });
    // 100 failures, each from a new address: no address is delayed, so only
    // the account's count can stop them.
    for (let i = 0; i < 100; i++) {
      const d = await t.attempt("owner@example.com", `198.51.100.${i}`);
      assert.equal(d.allowed, true, `failure ${i + 1}`);
      c.advance(1);
    }
    const stopped = await t.attempt("owner@example.com", "203.0.113.1");
    assert.deepEqual(
      stopped.allowed === false && stopped.reason,
      "hardStop",
    );
    c.advance(24 * 3600); // a day later: still stopped
    assert.equal(
      (await t.attempt("owner@example.com", "203.0.113.1")).allowed,
      false,
    );
    await t.reset("owner@example.com"); // a password reset by email
    assert.equal(
      (await t.attempt("owner@example.com", "203.0.113.1")).allowed,
      true,
    );
    // Another account is untouched throughout.
    assert.equal(
      (await t.attempt("other@example.com", "198.51.100.1")).allowed,
      true,
    );
  },
);

storeTest(
  "SECURITY item 45: the hard stop is configurable lower, never above 100",
  async (store, prefix) => {
    const c = clock();
    assert.throws(
      () => throttle(store, prefix, c, { hardStop: 101 }),
      RangeError,
    );
    const t = throttle(store, prefix, c, { hardStop: 5 });
    for (let i = 0; i < 5; i++) {
      assert.equal(
        (await t.attempt("a@example.com", `10.0.0.${i}`)).allowed,
        true,
      );
    }
    assert.equal((await t.attempt("a@example.com", "10.0.1.1")).allowed, false);
  },
);

storeTest(
  "SECURITY item 45: consecutive failures from one address wait 1, 2, 4, 8 s after the free ones, and a success resets the count",
  async (store, prefix) => {
    const c = clock();
    const t = throttle(store, prefix, c);
    const who = ["a@example.com", "192.0.2.7"] as const;
    for (let i = 0; i < 3; i++) {
      assert.equal((await t.attempt(...who)).allowed, true);
    }
    const waits: number[] = [];
    for (let i = 0; i < 4; i++) {
      const refused = await t.attempt(...who);
      assert.equal(refused.allowed, false);
      const wait = refused.allowed ? 0 : refused.retryAfterSeconds;
      waits.push(wait);
      c.advance(wait - 0.5);
      assert.equal((await t.attempt(...who)).allowed, false, "not yet");
      c.advance(0.5);
      assert.equal((await t.attempt(...who)).allowed, true, "after the wait");
    }
    assert.deepEqual(waits, [1, 2, 4, 8]);
    await t.succeeded(...who);
    for (let i = 0; i < 3; i++) {
      assert.equal((await t.attempt(...who)).allowed, true);
    }
  },
);

storeTest(
  "a stranger's 36 guesses from 12 other addresses never keep the owner's right password out before the hard stop",
  async (store, prefix) => {
    const c = clock();
    const t = throttle(store, prefix, c);
    for (let a = 0; a < 12; a++) {
      for (let i = 0; i < 3; i++) {
        await t.attempt("owner@example.com", `203.0.113.${a}`);
        c.advance(0.1);
      }
    }
    // The strangers are held by the account's delay (64 s and growing) ...
    const stranger = await t.attempt("owner@example.com", "203.0.113.0");
    assert.equal(stranger.allowed, false);
    // ... the owner, from an address that has not failed, is not.
    assert.equal(
      (await t.attempt("owner@example.com", "198.51.100.20")).allowed,
      true,
    );
    await t.succeeded("owner@example.com", "198.51.100.20");
    // Several dozen more (60 from 20 addresses): still not locked out.
    for (let a = 0; a < 20; a++) {
      for (let i = 0; i < 3; i++) {
        await t.attempt("owner@example.com", `192.0.2.${a}`);
      }
    }
    assert.equal(
      (await t.attempt("owner@example.com", "198.51.100.20")).allowed,
      true,
    );
  },
);

storeTest(
  "50 concurrent attempts from one address: at most freeFailures reach the password check",
  async (store, prefix) => {
    const c = clock();
    const t = throttle(store, prefix, c, { freeFailures: 10 });
    const decisions = await Promise.all(
      Array.from({ length: 50 }, () => t.attempt("b@example.com", "192.0.2.1")),
    );
    const allowed = decisions.filter((d) => d.allowed).length;
    // The account's and the pair's counters are incremented separately, so
    // under contention an attempt can rank later in one than in the other
    // and be refused by it: never more than 10, sometimes a few fewer.
    assert.ok(allowed <= 10 && allowed >= 5, `${allowed} allowed`);
    // Every attempt was counted: the next one waits.
    assert.equal(
      (await t.attempt("b@example.com", "192.0.2.1")).allowed,
      false,
    );
  },
);

storeTest(
  "per address: a sliding window, so the count does not drop to zero at a window boundary",
  async (store, prefix) => {
    const c = clock(); // on a minute boundary
    const t = throttle(store, prefix, c, {
      perAddress: { max: 5, windowSeconds: 60 },
    });
    for (let i = 0; i < 5; i++) {
      assert.equal(
        (await t.attempt(`u${i}@example.com`, "192.0.2.9")).allowed,
        true,
      );
    }
    const refused = await t.attempt("u9@example.com", "192.0.2.9");
    assert.equal(refused.allowed === false && refused.reason, "address");
    c.advance(60); // a new fixed window would start from zero here
    assert.equal(
      (await t.attempt("u9@example.com", "192.0.2.9")).allowed,
      false,
    );
    c.advance(30); // half of the previous window still counts: 2.5 < 5
    assert.equal(
      (await t.attempt("u9@example.com", "192.0.2.9")).allowed,
      true,
    );
    // Another address is not affected.
    assert.equal(
      (await t.attempt("u9@example.com", "192.0.2.10")).allowed,
      true,
    );
  },
);

function deviceSigner(purpose = "login-device"): DeviceTokenSigner {
  const keys = SecretProvider.fromValue(
    crypto.getRandomValues(new Uint8Array(32)),
  ).keys(purpose);
  return {
    sign: async (p) => signToken((await keys).current, purpose, p),
    verify: async (t) => verifyToken(await keys, purpose, t),
  };
}

storeTest(
  "issue 16 finding 7: 110 guesses from 110 addresses stop every untrusted browser at the hard stop, never the owner's, whose device token keeps working",
  async (store, prefix) => {
    const c = clock();
    const t = throttle(store, prefix, c, {
      devices: { signer: deviceSigner() },
    });
    const owner = "owner@example.com";
    assert.equal((await t.attempt(owner, "198.51.100.1")).allowed, true);
    await t.succeeded(owner, "198.51.100.1");
    const { token, maxAgeSeconds } = await t.trustDevice(owner);
    assert.equal(maxAgeSeconds, 180 * 86400);
    assert.doesNotMatch(token, /owner|example/, "no email in the token");
    for (let i = 0; i < 110; i++) {
      await t.attempt(owner, `203.0.${i >> 8}.${i & 255}`);
      c.advance(0.05);
    }
    // Without the token, even the right password from a fresh address.
    const held = await t.attempt(owner, "192.0.2.200");
    assert.equal(held.allowed === false && held.reason, "hardStop");
    // With it, from that same fresh address, and after a trusted success
    // the untrusted lockout still holds (no fresh count for strangers).
    for (let i = 0; i < 3; i++) {
      const d = await t.attempt(owner, "192.0.2.200", token);
      assert.deepEqual(d, { allowed: true, trustedDevice: true });
      await t.succeeded(owner, "192.0.2.200", token);
    }
    assert.equal((await t.attempt(owner, "192.0.2.201")).allowed, false);
    // A token of this browser for another account, a tampered token, a
    // token of another purpose and an expired one are untrusted.
    const other = await t.trustDevice("other@example.com");
    assert.equal(
      (await t.attempt(owner, "192.0.2.200", other.token)).allowed,
      false,
    );
    // One character inside the MAC changed (the last characters may carry
    // only padding bits, and "BA" could be what was there: a flaky test).
    const at = token.length - 10;
    const tampered = token.slice(0, at) + (token[at] === "A" ? "B" : "A") +
      token.slice(at + 1);
    assert.notEqual(tampered, token);
    assert.equal(
      (await t.attempt(owner, "192.0.2.200", tampered)).allowed,
      false,
    );
    const foreign = await throttle(store, prefix, c, {
      devices: { signer: deviceSigner("flash") },
    }).trustDevice(owner);
    assert.equal(
      (await t.attempt(owner, "192.0.2.200", foreign.token)).allowed,
      false,
    );
    c.advance(180 * 86400);
    assert.equal(
      (await t.attempt(owner, "192.0.2.200", token)).allowed,
      false,
      "expired",
    );
  },
);

storeTest(
  "issue 16 finding 7: a device token that fails maxFailures times in a row is trusted no more, until the browser signs in again",
  async (store, prefix) => {
    const c = clock();
    const t = throttle(store, prefix, c, {
      hardStop: 5,
      devices: { signer: deviceSigner(), maxFailures: 3 },
    });
    const who = "a@example.com";
    const { token } = await t.trustDevice(who);
    for (let i = 0; i < 5; i++) await t.attempt(who, `203.0.113.${i}`);
    for (let i = 0; i < 3; i++) {
      assert.equal(
        (await t.attempt(who, "198.51.100.9", token)).allowed,
        true,
        `trusted failure ${i + 1}`,
      );
    }
    // The fourth in a row: the token is dropped, and the account's hard
    // stop applies to this browser like any other.
    const dropped = await t.attempt(who, "198.51.100.9", token);
    assert.equal(dropped.allowed === false && dropped.reason, "hardStop");
    assert.equal((await t.attempt(who, "198.51.100.9", token)).allowed, false);
    // A success in between resets the device's count.
    const fresh = await t.trustDevice(who, token);
    assert.notEqual(fresh.token, token);
    for (let round = 0; round < 3; round++) {
      for (let i = 0; i < 2; i++) {
        assert.equal(
          (await t.attempt(who, "198.51.100.9", fresh.token)).allowed,
          true,
        );
      }
      assert.equal(
        (await t.attempt(who, "198.51.100.9", fresh.token)).allowed,
        true,
      );
      await t.succeeded(who, "198.51.100.9", fresh.token);
    }
  },
);

storeTest(
  "red-team review: forgetDevices() ends every device token minted before it (a pre-hijacker's tokens after the owner's proof or reset, any after a deletion), and a later sign-in trusts the browser again",
  async (store, prefix) => {
    const c = clock();
    const t = throttle(store, prefix, c, {
      hardStop: 5,
      devices: { signer: deviceSigner() },
    });
    const who = "victim@example.com";
    const collected = await t.trustDevice(who); // before the owner's proof
    for (let i = 0; i < 5; i++) await t.attempt(who, `203.0.113.${i}`);
    assert.equal(
      (await t.attempt(who, "198.51.100.9", collected.token)).allowed,
      true,
      "a control: the token exempts before it is forgotten",
    );
    c.advance(1);
    await t.forgetDevices(who);
    const refused = await t.attempt(who, "198.51.100.9", collected.token);
    assert.equal(refused.allowed === false && refused.reason, "hardStop");
    // Renewing a forgotten token mints a new device, trusted again.
    c.advance(1);
    const fresh = await t.trustDevice(who, collected.token);
    assert.deepEqual(await t.attempt(who, "198.51.100.9", fresh.token), {
      allowed: true,
      trustedDevice: true,
    });
    // Another account's devices are untouched.
    const other = await t.trustDevice("other@example.com");
    await t.forgetDevices(who);
    assert.equal(
      (await t.attempt("other@example.com", "198.51.100.9", other.token))
        .allowed,
      true,
    );
  },
);

storeTest(
  "fifth outside review: trustsDevice() answers whether the account trusts a token now (its own, not another account's, not a forged, forgotten or revoked one) and counts nothing",
  async (store, prefix) => {
    const c = clock();
    const t = throttle(store, prefix, c, {
      hardStop: 3,
      devices: { signer: deviceSigner(), maxFailures: 2 },
    });
    const who = "owner@example.com";
    const { token } = await t.trustDevice(who);
    const other = await t.trustDevice("other@example.com");
    assert.equal(await t.trustsDevice(who, token), true);
    assert.equal(await t.trustsDevice(who, other.token), false);
    assert.equal(await t.trustsDevice(who, `${token}x`), false);
    assert.equal(await t.trustsDevice(who, "forged"), false);
    assert.equal(await t.trustsDevice(who, null), false);
    assert.equal(await t.trustsDevice(who), false);
    // Asked many times, it counts nothing: the device's own failure limit
    // (2) and the account's hard stop (3) are untouched.
    for (let i = 0; i < 5; i++) await t.trustsDevice(who, token);
    assert.deepEqual(await t.attempt(who, "198.51.100.9", token), {
      allowed: true,
      trustedDevice: true,
    });
    for (let i = 0; i < 3; i++) {
      assert.equal((await t.attempt(who, `203.0.113.${i}`)).allowed, true);
    }
    // Past its failure limit a token is revoked: no longer trusted.
    await t.attempt(who, "198.51.100.9", token);
    await t.attempt(who, "198.51.100.9", token);
    assert.equal(await t.trustsDevice(who, token), false);
    // Forgotten: no longer trusted either.
    const fresh = await t.trustDevice(who);
    assert.equal(await t.trustsDevice(who, fresh.token), true);
    c.advance(1);
    await t.forgetDevices(who);
    assert.equal(await t.trustsDevice(who, fresh.token), false);
    // Without devices, nothing is trusted.
    assert.equal(
      await throttle(store, prefix, c).trustsDevice(who, token),
      false,
    );
  },
);

Deno.test("LoginThrottle: trustDevice() without devices, or a devices option without a signer, is a clear error", async () => {
  const store = new MemoryKV();
  await assert.rejects(
    new LoginThrottle({ store }).trustDevice("a@example.com"),
    TypeError,
  );
  assert.throws(
    () =>
      new LoginThrottle({
        store,
        devices: {} as unknown as LoginThrottleOptions["devices"] & object,
      }),
    TypeError,
  );
  assert.throws(
    () =>
      new LoginThrottle({
        store,
        devices: { signer: deviceSigner(), maxFailures: 0 },
      }),
    RangeError,
  );
});

storeTest(
  "SlidingWindowLimiter: max hits per sliding window, refused hits stay counted, reset() forgets",
  async (store, prefix) => {
    const c = clock();
    const limiter = new SlidingWindowLimiter(store, { prefix, now: c.now });
    const limit = {
      name: "register",
      key: "192.0.2.1",
      max: 3,
      windowSeconds: 60,
    };
    for (let i = 0; i < 3; i++) assert.equal(await limiter.take([limit]), 0);
    assert.ok(await limiter.take([limit]) > 0);
    c.advance(60);
    assert.ok(
      await limiter.take([limit]) > 0,
      "the previous window still counts",
    );
    await limiter.reset([limit]);
    assert.equal(await limiter.take([limit]), 0);
  },
);

Deno.test("lib/throttle is neutral: it imports nothing from lib/authn, lib/session or lib/authz, and authn does not import it", async () => {
  const imports = /(?:from|import)\s*\(?\s*"([^"]+)"/g;
  const dir = new URL("../../lib/throttle/", import.meta.url);
  for await (const entry of Deno.readDir(dir)) {
    const text = await Deno.readTextFile(new URL(entry.name, dir));
    for (const [, spec] of text.matchAll(imports)) {
      if (!spec.startsWith(".")) continue; // doc examples name the package
      // Its own files, and the library's one error type (a neutral file).
      assert.ok(
        spec.startsWith("./") || spec === "../auth_error.ts",
        `${entry.name} imports ${spec}`,
      );
    }
  }
  const authn = new URL("../../lib/authn/", import.meta.url);
  for await (const entry of Deno.readDir(authn)) {
    if (!entry.isFile) continue;
    const text = await Deno.readTextFile(new URL(entry.name, authn));
    assert.ok(!text.includes("../throttle/"), entry.name);
  }
});

storeTest(
  "clearAccount(): a stop strangers set on an address before its account existed is lifted, and failures from then on count at once (fourth outside review)",
  async (store, prefix) => {
    const c = clock();
    const t = throttle(store, prefix, c, {
      perAddress: { max: 10_000, windowSeconds: 60 },
      freeFailures: 2,
    });
    for (let i = 0; i < 100; i++) {
      await t.attempt("new@example.com", `198.51.100.${i}`);
    }
    const stopped = await t.attempt("new@example.com", "203.0.113.1");
    assert.equal(stopped.allowed === false && stopped.reason, "hardStop");
    await t.clearAccount("new@example.com"); // the account is created
    // No clock movement: failures made in the same instant count.
    for (let i = 0; i < 2; i++) {
      assert.equal(
        (await t.attempt("new@example.com", "203.0.113.1")).allowed,
        true,
        `failure ${i + 1}`,
      );
    }
    const delayed = await t.attempt("new@example.com", "203.0.113.1");
    assert.equal(delayed.allowed === false && delayed.reason, "delay");
  },
);
