// KVSessionStore over MemoryKV remembers "neither key held" only while the
// store's write count stands still: every write of any kind (put, delete,
// increment, a revocation, a cut-off) makes the next request read again, so
// the warm path answers exactly what a read would (SECURITY.md 35–37).
import assert from "node:assert/strict";
import {
  KVSessionStore,
  MemoryKV,
  SecretProvider,
  SessionManager,
} from "../../mod.ts";
import { SECRET } from "./_helpers.ts";

Deno.test("a session remembered as not revoked is refused on the next request after revoke, revokeAll, or a raw write of its keys", async () => {
  const kv = new MemoryKV();
  const store = new KVSessionStore(kv);
  const sessions = new SessionManager({
    secret: SecretProvider.fromValue(SECRET),
    store,
  });
  // revoke(): the jti goes on the denylist.
  const a = await sessions.issue("user_1");
  const idA = (await sessions.resolve(a))!;
  for (let i = 0; i < 3; i++) assert.equal(sessions.peek(a)?.subject, "user_1");
  await sessions.revoke(a);
  assert.equal(sessions.peek(a), null);
  assert.equal(await sessions.resolve(a), null);
  // An unrelated write, then the denylist entry removed by hand: read again.
  await kv.put("unrelated", "1");
  await kv.delete(`portcullis:deny:${idA.jti}`);
  assert.equal(sessions.peek(a)?.subject, "user_1");

  // revokeAll(): the subject's cut-off.
  const b = await sessions.issue("user_2");
  await sessions.resolve(b);
  assert.equal(sessions.peek(b)?.subject, "user_2");
  await sessions.revokeAll("user_2");
  assert.equal(sessions.peek(b), null);

  // A denylist key written through increment() counts as held too.
  const c = await sessions.issue("user_3");
  const idC = (await sessions.resolve(c))!;
  assert.equal(sessions.peek(c)?.subject, "user_3");
  await kv.increment(`portcullis:deny:${idC.jti}`, 60);
  assert.equal(sessions.peek(c), null);
  assert.equal(store.peek("user_3", idC.jti, idC.issuedAt), true);
});

Deno.test("a cut-off written by another store over the same MemoryKV is seen on the next request", async () => {
  const kv = new MemoryKV();
  const sessions = new SessionManager({
    secret: SecretProvider.fromValue(SECRET),
    store: new KVSessionStore(kv),
  });
  const other = new SessionManager({
    secret: SecretProvider.fromValue(SECRET),
    store: new KVSessionStore(kv),
  });
  const t = await sessions.issue("user_1");
  await sessions.resolve(t);
  assert.equal(sessions.peek(t)?.subject, "user_1");
  await other.revoke(t);
  assert.equal(sessions.peek(t), null);
});
