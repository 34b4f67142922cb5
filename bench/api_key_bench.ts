// A request authenticated by an API key against a session check plus one
// key-value read (issue 28's target: no more than that), per request
// through identityMiddleware (compose, the middleware, requireAuthenticated,
// a handler that reads the identity):
//
//   deno bench -A --import-map=bench/import_map.json --lock=bench/deno.lock bench/api_key_bench.ts
//
// - "warm": a key this process verified before (its SHA-256 skipped, its
//   store read done) against a Bearer session seen before plus one read of
//   the same MemoryKV in the handler (the baseline: `getMany` of a record
//   of a key's size and its `JSON.parse`, as the key store reads a key),
//   and the session alone.
// - "cold": keys never seen (20,000 of them, twice the verified-key memory,
//   so each is a miss: the parse, the read and the SHA-256) against session
//   tokens never seen (a manager without its cache: the MAC) plus one read.
// - "async store": the same two, warm, over a store that answers only
//   asynchronously, as every store but the in-process MemoryKV does (Deno
//   KV, Redis, Upstash, libSQL): the session's denylist read is then a
//   round trip under its deadline too, as the key's read is. (With
//   MemoryKV the warm session needs no promise at all: `peek`.)
// - "sql": the same warm key over `SQLApiKeyStore` on a local SQLite file
//   (the reference app's `node:sqlite` adapter): one query by primary key
//   with the ban check, against the session plus one such query.
//
// The key store of "warm" and "cold" keeps each key's record as JSON under
// its id in the MemoryKV: one `getMany` per request, as a key-value store
// would serve it.
import {
  compose,
  currentIdentity,
  identityMiddleware,
  type KeyValueStore,
  KVSessionStore,
  MemoryKV,
  requireAuthenticated,
  SecretProvider,
  SessionManager,
} from "../mod.ts";
import {
  ApiKeys,
  type ApiKeyStore,
  type StoredApiKey,
} from "../lib/session/mod.ts";
import { sql } from "drizzle-orm";
import {
  migrate,
  SQLApiKeyStore,
  SQLCredentialStore,
} from "../stores/sql/mod.ts";
import { openLocalSQLite } from "../packages/accounts/deno/_node_sqlite.ts";

const SECRET = "ITZ7i8KGtM5W0AmMoNBXRJsiYZxFlnf8eQM7tGGAQG4=";
const N = 20_000;
const DAY = 86_400_000;

const kv = new MemoryKV();
const secret = SecretProvider.fromValue(SECRET);
const warmSessions = new SessionManager({
  secret,
  store: new KVSessionStore(kv),
});
const coldSessions = new SessionManager({
  secret,
  store: new KVSessionStore(kv),
  cacheSize: 0,
});

/** Keys as JSON records in the MemoryKV, one read by id. */
const kvStore: ApiKeyStore = {
  async findApiKey(id) {
    const [raw] = await kv.getMany([`apikey:${id}`]);
    return raw === null ? null : JSON.parse(raw) as StoredApiKey;
  },
};
const keys = new ApiKeys({ store: kvStore });

async function storeKey(
  subject: string,
  put: (id: string, record: StoredApiKey) => Promise<void>,
  minter: ApiKeys = keys,
): Promise<string> {
  const { key, id, hash } = await minter.mint();
  await put(id, {
    subject,
    hash,
    scopes: ["notes:view"],
    createdAt: Date.now(),
    expiresAt: Date.now() + 30 * DAY,
    // Used just now: no "last used" write during the bench.
    lastUsedAt: Date.now() + DAY,
  });
  return key;
}
const putKv = (id: string, r: StoredApiKey) =>
  kv.put(`apikey:${id}`, JSON.stringify(r));

const coldKeys: string[] = [];
const coldTokens: string[] = [];
for (let i = 0; i < N; i++) {
  coldKeys.push(await storeKey(`user_${i}`, putKv));
  coldTokens.push(await coldSessions.issue(`user_${i}`));
}
const warmKey = await storeKey("user_w", putKv);
const warmToken = await warmSessions.issue("user_w");
// The baseline's read: a record of a key's size, read and decoded as the
// key store's is (a read of a record is the get and its JSON.parse).
const profile = JSON.stringify({
  subject: "user_w",
  hash: "0".repeat(64),
  scopes: ["notes:view"],
  createdAt: Date.now(),
  expiresAt: Date.now() + DAY,
  lastUsedAt: 0,
});
for (let n = 0; n < N; n++) await kv.put(`profile:user_${n}`, profile);
await kv.put("profile:user_w", profile);

const OK = new Response(null);
const withKeys = compose(
  [identityMiddleware(warmSessions, { apiKeys: keys, onEvent: () => {} })],
  (req) => requireAuthenticated(req) ?? (currentIdentity(req) ? OK : OK),
);
// The baseline: the session check, then one key-value read in the handler.
const sessionPlusRead = (sessions: SessionManager) =>
  compose(
    [identityMiddleware(sessions, { onEvent: () => {} })],
    async (req) => {
      const denied = requireAuthenticated(req);
      if (denied) return denied;
      const [raw] = await kv.getMany([
        `profile:${currentIdentity(req)!.subject}`,
      ]);
      return JSON.parse(raw!).subject ? OK : OK;
    },
  );
const sessionOnly = compose(
  [identityMiddleware(warmSessions, { onEvent: () => {} })],
  (req) => requireAuthenticated(req) ?? OK,
);
const warmPlusRead = sessionPlusRead(warmSessions);
const coldPlusRead = sessionPlusRead(coldSessions);

const request = (token: string) =>
  new Request("https://example.com/api/notes/1", {
    headers: { authorization: `Bearer ${token}` },
  });
const warmKeyReq = request(warmKey);
const warmTokenReq = request(warmToken);
const coldKeyReqs = coldKeys.map(request);
const coldTokenReqs = coldTokens.map(request);
// Warm them once.
for (
  const [app, req] of [[withKeys, warmKeyReq], [
    warmPlusRead,
    warmTokenReq,
  ]] as const
) {
  if ((await app(req)) !== OK) throw new Error("setup");
}

let i = 0;
const next = () => (i = (i + 1) % N);
let k = 0;
const nextKey = () => (k = (k + 1) % N);

Deno.bench({
  name: "Bearer session (warm) + one key-value read",
  group: "warm",
  baseline: true,
}, async () => {
  if ((await warmPlusRead(warmTokenReq)) !== OK) throw new Error("bad");
});
Deno.bench({ name: "API key (warm)", group: "warm" }, async () => {
  if ((await withKeys(warmKeyReq)) !== OK) throw new Error("bad");
});
Deno.bench({ name: "Bearer session (warm) alone", group: "warm" }, async () => {
  if ((await sessionOnly(warmTokenReq)) !== OK) throw new Error("bad");
});

Deno.bench({
  name: "Bearer session (cold) + one key-value read",
  group: "cold",
  baseline: true,
}, async () => {
  if ((await coldPlusRead(coldTokenReqs[next()])) !== OK) {
    throw new Error("bad");
  }
});
Deno.bench({ name: "API key (cold)", group: "cold" }, async () => {
  if ((await withKeys(coldKeyReqs[nextKey()])) !== OK) throw new Error("bad");
});

// A store that answers only asynchronously (no `getManySync`).
const remote: KeyValueStore = {
  getMany: (keys) => kv.getMany(keys),
  put: (key, value, options) => kv.put(key, value, options),
  delete: (key) => kv.delete(key),
  increment: (key, ttl) => kv.increment!(key, ttl),
};
const asyncSessions = new SessionManager({
  secret,
  store: new KVSessionStore(remote),
});
const asyncKeys = new ApiKeys({
  store: {
    async findApiKey(id) {
      const [raw] = await remote.getMany([`apikey:${id}`]);
      return raw === null ? null : JSON.parse(raw) as StoredApiKey;
    },
  },
});
const asyncWithKeys = compose(
  [identityMiddleware(asyncSessions, {
    apiKeys: asyncKeys,
    onEvent: () => {},
  })],
  (req) => requireAuthenticated(req) ?? (currentIdentity(req) ? OK : OK),
);
const asyncPlusRead = compose(
  [identityMiddleware(asyncSessions, { onEvent: () => {} })],
  async (req) => {
    const denied = requireAuthenticated(req);
    if (denied) return denied;
    const [raw] = await remote.getMany([
      `profile:${currentIdentity(req)!.subject}`,
    ]);
    return JSON.parse(raw!).subject ? OK : OK;
  },
);
const asyncToken = await asyncSessions.issue("user_w");
const asyncTokenReq = request(asyncToken);
if ((await asyncWithKeys(warmKeyReq)) !== OK) throw new Error("setup");
if ((await asyncPlusRead(asyncTokenReq)) !== OK) throw new Error("setup");

Deno.bench({
  name: "async store: Bearer session (warm) + one key-value read",
  group: "async store",
  baseline: true,
}, async () => {
  if ((await asyncPlusRead(asyncTokenReq)) !== OK) throw new Error("bad");
});
Deno.bench(
  { name: "async store: API key (warm)", group: "async store" },
  async () => {
    if ((await asyncWithKeys(warmKeyReq)) !== OK) throw new Error("bad");
  },
);

// Over SQL: a local SQLite file, as the reference app keeps its keys.
const dir = await Deno.makeTempDir({ prefix: "portcullis-key-bench-" });
const local = openLocalSQLite(`${dir}/app.db`);
await migrate(local.db);
await new SQLCredentialStore(local.db).create({
  id: "user_s",
  email: "s@example.com",
  passwordHash: "$x",
  createdAt: 1,
});
const sqlStore = new SQLApiKeyStore(local.db);
const sqlKeys = new ApiKeys({ store: sqlStore });
const sqlKey = await storeKey("user_s", async (id, r) => {
  await sqlStore.add({
    id,
    subject: r.subject,
    name: "bench",
    hash: r.hash,
    scopes: [...r.scopes],
    createdAt: r.createdAt,
    expiresAt: r.expiresAt,
    lastUsedAt: r.lastUsedAt,
  });
}, sqlKeys);
const withSqlKeys = compose(
  [identityMiddleware(warmSessions, { apiKeys: sqlKeys, onEvent: () => {} })],
  (req) => requireAuthenticated(req) ?? OK,
);
const sqlKeyReq = request(sqlKey);
const sqlToken = await warmSessions.issue("user_s");
const sqlTokenReq = request(sqlToken);
const sessionPlusQuery = compose(
  [identityMiddleware(warmSessions, { onEvent: () => {} })],
  async (req) => {
    const denied = requireAuthenticated(req);
    if (denied) return denied;
    await local.db.all(
      sql`SELECT id, email FROM users WHERE id = ${
        currentIdentity(req)!.subject
      }`,
    );
    return OK;
  },
);
if ((await withSqlKeys(sqlKeyReq)) !== OK) throw new Error("setup");
if ((await sessionPlusQuery(sqlTokenReq)) !== OK) throw new Error("setup");

Deno.bench({
  name: "Bearer session (warm) + one SQLite query by primary key",
  group: "sql",
  baseline: true,
}, async () => {
  if ((await sessionPlusQuery(sqlTokenReq)) !== OK) throw new Error("bad");
});
Deno.bench(
  { name: "API key over SQLApiKeyStore (warm)", group: "sql" },
  async () => {
    if ((await withSqlKeys(sqlKeyReq)) !== OK) throw new Error("bad");
  },
);

globalThis.addEventListener("unload", () => {
  local.close();
  Deno.removeSync(dir, { recursive: true });
});
