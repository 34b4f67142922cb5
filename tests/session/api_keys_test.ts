// API keys (issue 28; SECURITY.md item 61): the format, the parser, and
// the resolver's rules: shown once, stored only as a hash, found by id
// (never a scan), the same work for an unknown id and a wrong secret.
import assert from "node:assert/strict";
import fc from "fast-check";
import {
  ApiKeys,
  type ApiKeyStore,
  hashApiKey,
  mintApiKey,
  parseApiKey,
  type StoredApiKey,
} from "../../lib/session/mod.ts";
import { AuthError } from "../../mod.ts";

const DAY = 86_400_000;

/** A store in a Map, counting its reads and recording its use writes. */
function mapStore(): ApiKeyStore & {
  rows: Map<string, StoredApiKey>;
  reads: string[];
  uses: [string, number][];
} {
  const rows = new Map<string, StoredApiKey>();
  const reads: string[] = [];
  const uses: [string, number][] = [];
  return {
    rows,
    reads,
    uses,
    findApiKey(id) {
      reads.push(id);
      return Promise.resolve(rows.get(id) ?? null);
    },
    recordApiKeyUse(id, at) {
      uses.push([id, at]);
      const row = rows.get(id);
      if (row) rows.set(id, { ...row, lastUsedAt: at });
      return Promise.resolve();
    },
  };
}

async function keyFor(
  store: ReturnType<typeof mapStore>,
  keys: ApiKeys,
  extra: Partial<StoredApiKey> = {},
) {
  const minted = await keys.mint();
  store.rows.set(minted.id, {
    subject: "user_1",
    hash: minted.hash,
    scopes: ["view"],
    createdAt: 1_000,
    expiresAt: Date.now() + DAY,
    lastUsedAt: 0,
    ...extra,
  });
  return minted;
}

Deno.test("a minted key has the documented form: prefix, 16-character id, 59 characters of secret and checksum", async () => {
  for (const prefix of ["pc", "acme", "a1b2c3d4e5"]) {
    const { key, id, hash } = await mintApiKey(prefix);
    assert.match(
      key,
      new RegExp(`^${prefix}_[a-z2-7]{16}_[a-z2-7]{59}$`),
    );
    assert.equal(key.slice(prefix.length + 1, prefix.length + 17), id);
    assert.equal(hash, await hashApiKey(key));
    assert.match(hash, /^[0-9a-f]{64}$/);
    assert.equal(parseApiKey(prefix, key), id);
  }
});

Deno.test("a key carries at least 128 bits: 10,000 keys, no id or secret twice", async () => {
  const ids = new Set<string>();
  const secrets = new Set<string>();
  for (let i = 0; i < 10_000; i++) {
    const { key, id } = await mintApiKey();
    ids.add(id);
    secrets.add(key.slice(20, 72));
  }
  assert.equal(ids.size, 10_000);
  assert.equal(secrets.size, 10_000);
  // 52 base32 characters of secret: 256 bits of randomness, all of it used.
  const { key } = await mintApiKey();
  assert.equal(key.slice(20, 72).length * 5 - 4, 256);
});

Deno.test("parseApiKey refuses a key of another prefix, a changed character, a bad checksum and non-canonical bits", async () => {
  const { key } = await mintApiKey("pc");
  assert.equal(parseApiKey("gh", key), null);
  assert.equal(parseApiKey("pc", key.toUpperCase()), null);
  assert.equal(parseApiKey("pc", key + "a"), null);
  assert.equal(parseApiKey("pc", key.slice(0, -1)), null);
  // One character of the secret changed: the checksum no longer holds.
  const i = 30;
  const flipped = key.slice(0, i) + (key[i] === "a" ? "b" : "a") +
    key.slice(i + 1);
  assert.equal(parseApiKey("pc", flipped), null);
  await assert.rejects(() => mintApiKey("PC"), TypeError);
  await assert.rejects(() => mintApiKey("p"), TypeError);
});

Deno.test("parseApiKey answers only for the exact form (property)", async () => {
  const { key, id } = await mintApiKey("pc");
  fc.assert(
    fc.property(fc.string({ maxLength: 120 }), (s) => {
      const parsed = parseApiKey("pc", s);
      return parsed === null || s === key || /^pc_[a-z2-7]{16}_/.test(s);
    }),
    { numRuns: 2000 },
  );
  // Every single-character change of a real key is refused.
  for (let i = 3; i < key.length; i++) {
    if (key[i] === "_") continue;
    const c = key[i] === "a" ? "b" : "a";
    const changed = key.slice(0, i) + c + key.slice(i + 1);
    assert.equal(parseApiKey("pc", changed), null, `position ${i}`);
  }
  assert.equal(parseApiKey("pc", key), id);
});

Deno.test("ApiKeys resolves a stored key to its owner with the key's scopes, one read by id", async () => {
  const store = mapStore();
  const keys = new ApiKeys({ store });
  const { key, id } = await keyFor(store, keys, { scopes: ["view", "edit"] });
  const who = await keys.resolve(key);
  assert.equal(who?.subject, "user_1");
  assert.equal(who?.jti, id);
  assert.deepEqual(who?.apiKey, { id, scopes: ["view", "edit"] });
  assert.equal(who?.actor, undefined);
  assert.deepEqual(store.reads, [id]);
});

Deno.test("a forged key (right form, wrong secret), an unknown id, a revoked key and an expired key resolve to nothing", async () => {
  const now = { t: Date.now() };
  const store = mapStore();
  const keys = new ApiKeys({ store, now: () => now.t });
  const real = await keyFor(store, keys);
  // Forged: the real id with another secret, checksum recomputed.
  const other = await mintApiKey();
  const head = `pc_${real.id}_${other.key.slice(20, 72)}`;
  const forged = (await mintApiKey()).key; // a well-formed key nobody stored
  assert.equal(await keys.resolve(forged), null);
  const withRealId = await reChecksum(head);
  assert.equal(parseApiKey("pc", withRealId), real.id);
  assert.equal(await keys.resolve(withRealId), null);
  // Revoked (gone from the store), after it was used once.
  assert.ok(await keys.resolve(real.key));
  store.rows.delete(real.id);
  assert.equal(await keys.resolve(real.key), null);
  // Expired.
  const old = await keyFor(store, keys, { expiresAt: now.t + 1000 });
  assert.ok(await keys.resolve(old.key));
  now.t += 1000;
  assert.equal(await keys.resolve(old.key), null);
});

/** A key with this head and a valid checksum (what a forger computes). */
function reChecksum(head: string): string {
  // The checksum is public (CRC-32): mint keys until one shows the codec,
  // then compute it the way the module does, through parseApiKey.
  const ALPHABET = "abcdefghijklmnopqrstuvwxyz234567";
  let c = 0xffffffff;
  const table = new Uint32Array(256);
  for (let n = 0; n < 256; n++) {
    let v = n;
    for (let k = 0; k < 8; k++) v = v & 1 ? 0xedb88320 ^ (v >>> 1) : v >>> 1;
    table[n] = v >>> 0;
  }
  for (let i = 0; i < head.length; i++) {
    c = table[(c ^ head.charCodeAt(i)) & 0xff] ^ (c >>> 8);
  }
  const n = (c ^ 0xffffffff) >>> 0;
  const bytes = [n >>> 24, (n >>> 16) & 255, (n >>> 8) & 255, n & 255];
  let out = "";
  let bits = 0;
  let value = 0;
  for (const b of bytes) {
    value = (value << 8) | b;
    bits += 8;
    while (bits >= 5) {
      out += ALPHABET[(value >>> (bits - 5)) & 31];
      bits -= 5;
    }
  }
  if (bits > 0) out += ALPHABET[(value << (5 - bits)) & 31];
  return head + out;
}

Deno.test("an unknown key id and a wrong secret cost the same work: one store read, one SHA-256, one comparison", async () => {
  const store = mapStore();
  const keys = new ApiKeys({ store });
  const real = await keyFor(store, keys);
  const unknown = (await mintApiKey()).key;
  const wrong = await reChecksum(
    `pc_${real.id}_${(await mintApiKey()).key.slice(20, 72)}`,
  );
  const digest = crypto.subtle.digest.bind(crypto.subtle);
  let digests = 0;
  crypto.subtle.digest = ((...args: Parameters<typeof digest>) => {
    digests++;
    return digest(...args);
  }) as typeof crypto.subtle.digest;
  try {
    for (const probe of [unknown, wrong]) {
      digests = 0;
      store.reads.length = 0;
      assert.equal(await keys.resolve(probe), null);
      assert.equal(digests, 1, "one SHA-256");
      assert.equal(store.reads.length, 1, "one store read");
    }
    // A probe is never remembered: the second try costs the same again.
    digests = 0;
    assert.equal(await keys.resolve(wrong), null);
    assert.equal(digests, 1);
  } finally {
    crypto.subtle.digest = digest;
  }
});

Deno.test("a key verified before skips its hash, but its store read happens on every request (revocation is immediate)", async () => {
  const store = mapStore();
  const keys = new ApiKeys({ store });
  const real = await keyFor(store, keys);
  assert.ok(await keys.resolve(real.key));
  const digest = crypto.subtle.digest.bind(crypto.subtle);
  let digests = 0;
  crypto.subtle.digest = ((...args: Parameters<typeof digest>) => {
    digests++;
    return digest(...args);
  }) as typeof crypto.subtle.digest;
  try {
    store.reads.length = 0;
    assert.ok(await keys.resolve(real.key));
    assert.equal(digests, 0);
    assert.equal(store.reads.length, 1);
  } finally {
    crypto.subtle.digest = digest;
  }
  // The row now holds another hash (the id reused): the remembered hash no
  // longer matches.
  const row = store.rows.get(real.id)!;
  store.rows.set(real.id, { ...row, hash: "f".repeat(64) });
  assert.equal(await keys.resolve(real.key), null);
});

Deno.test("last use is written at most once a minute per key, after the key was verified, and never awaited", async () => {
  const now = { t: 1_700_000_000_000 };
  const store = mapStore();
  const keys = new ApiKeys({ store, now: () => now.t });
  const real = await keyFor(store, keys, { expiresAt: now.t + DAY });
  for (let i = 0; i < 100; i++) assert.ok(await keys.resolve(real.key));
  assert.deepEqual(store.uses, [[real.id, now.t]]);
  now.t += 59_000;
  for (let i = 0; i < 10; i++) await keys.resolve(real.key);
  assert.equal(store.uses.length, 1);
  now.t += 1_000;
  await keys.resolve(real.key);
  assert.equal(store.uses.length, 2);
  // A forged key with the real id never stamps a use.
  now.t += 120_000;
  const wrong = await reChecksum(
    `pc_${real.id}_${(await mintApiKey()).key.slice(20, 72)}`,
  );
  await keys.resolve(wrong);
  assert.equal(store.uses.length, 2);
});

Deno.test("a failing or hanging key store answers STORE_UNAVAILABLE, never an identity", async () => {
  const broken = new ApiKeys({
    store: { findApiKey: () => Promise.reject(new Error("down")) },
  });
  const { key } = await mintApiKey();
  await assert.rejects(
    () => broken.resolve(key),
    (e) => e instanceof AuthError && e.code === "STORE_UNAVAILABLE",
  );
  const hanging = new ApiKeys({
    store: { findApiKey: () => new Promise(() => {}) },
    timeoutMs: 50,
  });
  await assert.rejects(
    () => hanging.resolve(key),
    (e) =>
      e instanceof AuthError && e.code === "STORE_UNAVAILABLE" &&
      e.reason === "timeout",
  );
});

Deno.test("a key's identity follows its record: scopes or expiry changed in the store apply on the next request", async () => {
  const store = mapStore();
  const keys = new ApiKeys({ store });
  const real = await keyFor(store, keys, { scopes: ["view", "edit"] });
  assert.deepEqual((await keys.resolve(real.key))?.apiKey?.scopes, [
    "view",
    "edit",
  ]);
  const row = store.rows.get(real.id)!;
  store.rows.set(real.id, { ...row, scopes: ["view"] });
  assert.deepEqual((await keys.resolve(real.key))?.apiKey?.scopes, ["view"]);
  store.rows.set(real.id, { ...row, scopes: ["view"], expiresAt: 1 });
  assert.equal(await keys.resolve(real.key), null);
});
