/**
 * Issue 16, finding 8 (a stranger can wipe the activity log): every failed
 * and throttled attempt wrote one event, so a stranger's 120 attempts
 * pushed the owner's last 50 real entries out of the activity page, and
 * the table grew without bound. Now the events a stranger can cause are
 * kept once per account and window, and the table is capped per account,
 * dropping those first.
 *
 * @module
 */
import assert from "node:assert/strict";
import { api, bearer, Browser, registerJson, startApp } from "./_harness.ts";

const OWNER = "owner@example.com";
const PASSWORD = "correct horse battery";

Deno.test("issue 16 finding 8: after a stranger's 120 attempts the owner's last 50 real entries are all still kept, and the activity page still shows them", async () => {
  await using app = await startApp();
  const { subject, token } = await registerJson(app.origin, OWNER);
  // 49 sign-ins of the owner: with the registration, 50 real entries.
  for (let i = 0; i < 49; i++) {
    app.advance(1000);
    const res = await api(app.origin, "POST", "/login", {
      email: OWNER,
      password: PASSWORD,
    });
    assert.equal(res.status, 200);
  }
  // The stranger: 120 attempts from 120 addresses (100 wrong passwords,
  // then the hard stop's refusals).
  app.advance(1000);
  const statuses: number[] = [];
  for (let i = 0; i < 120; i++) {
    statuses.push(
      (await api(app.origin, "POST", "/login", {
        email: OWNER,
        password: `guess ${i}`,
      }, { "x-test-client": `203.0.${i >> 8}.${i & 255}` })).status,
    );
  }
  assert.equal(statuses.filter((s) => s === 401).length, 100);
  assert.equal(statuses.filter((s) => s === 429).length, 20);

  const rows = await app.query(
    `SELECT type, COUNT(*) AS n FROM auth_events WHERE subject = '${subject}' GROUP BY type ORDER BY type`,
  );
  assert.deepEqual(
    rows.map((r) => [r.type, Number(r.n)]),
    [["login", 49], ["login_failed", 1], ["registered", 1], ["throttled", 1]],
  );
  const activity = await api(
    app.origin,
    "GET",
    "/api/activity",
    undefined,
    bearer(token),
  );
  assert.equal(activity.status, 200);
  const types = (activity.body.events as { type: string }[]).map((e) => e.type);
  assert.equal(types.length, 50);
  assert.deepEqual(types.slice(0, 2).toSorted(), ["login_failed", "throttled"]);
  assert.deepEqual(new Set(types.slice(2)), new Set(["login"]));
});

const enc = new TextEncoder();
const b64u = (bytes: Uint8Array) =>
  btoa(String.fromCharCode(...bytes)).replace(/\+/g, "-").replace(/\//g, "_")
    .replace(/=+$/, "");
const b64json = (v: unknown) => b64u(enc.encode(JSON.stringify(v)));

/** A `Secure-Session-Response` JWT signed by `pair`, as Chromium makes it. */
async function dbscProof(
  pair: CryptoKeyPair,
  jti: string,
  withKey: boolean,
): Promise<string> {
  const j = await crypto.subtle.exportKey("jwk", pair.publicKey);
  const header = withKey
    ? {
      alg: "ES256",
      typ: "dbsc+jwt",
      jwk: { kty: "EC", crv: "P-256", x: j.x, y: j.y },
    }
    : { alg: "ES256", typ: "dbsc+jwt" };
  const input = `${b64json(header)}.${b64json({ jti })}`;
  const sig = await crypto.subtle.sign(
    { name: "ECDSA", hash: "SHA-256" },
    pair.privateKey,
    enc.encode(input),
  );
  return `${input}.${b64u(new Uint8Array(sig))}`;
}

function newPair(): Promise<CryptoKeyPair> {
  return crypto.subtle.generateKey(
    { name: "ECDSA", namedCurve: "P-256" },
    true,
    ["sign", "verify"],
  );
}

Deno.test("issue 27 finding 3: a stranger holding only a device-bound session's id cannot flood the owner's activity with binding_proof_refused", async () => {
  await using app = await startApp();
  const { subject } = await registerJson(app.origin, OWNER);
  // The owner signs in with a DBSC browser and binds the session.
  const owner = new Browser(app.origin);
  app.advance(1000);
  const login = await owner.post("/login", {
    email: OWNER,
    password: PASSWORD,
  });
  assert.equal(login.status, 303);
  await login.body?.cancel();
  const offer = login.headers.get("secure-session-registration");
  const challenge = /challenge="([^"]+)"/.exec(offer ?? "")?.[1];
  assert.ok(challenge, `no registration offer: ${offer}`);
  const key = await newPair();
  const bound = await owner.fetch("/auth/dbsc/start", {
    method: "POST",
    headers: {
      "secure-session-response": await dbscProof(key, challenge, true),
    },
  });
  assert.equal(bound.status, 200);
  const id = (await bound.json()).session_identifier as string;
  // 45 real entries of the owner after the registration and the binding.
  for (let i = 0; i < 45; i++) {
    app.advance(1000);
    const res = await api(app.origin, "POST", "/login", {
      email: OWNER,
      password: PASSWORD,
    });
    assert.equal(res.status, 200);
  }
  // The stranger: only the session id, 60 pairs of refresh (no proof, then
  // a wrong key's proof over the challenge it was handed).
  app.advance(1000);
  const stranger = await newPair();
  for (let i = 0; i < 60; i++) {
    const first = await fetch(new URL("/auth/dbsc/refresh", app.origin), {
      method: "POST",
      headers: { "sec-secure-session-id": id },
    });
    assert.equal(first.status, 403);
    await first.body?.cancel();
    const c = /^"([^"]+)"/.exec(
      first.headers.get("secure-session-challenge") ?? "",
    )![1];
    const second = await fetch(new URL("/auth/dbsc/refresh", app.origin), {
      method: "POST",
      headers: {
        "sec-secure-session-id": id,
        "secure-session-response": await dbscProof(stranger, c, false),
      },
    });
    assert.equal(second.status, 400);
    await second.body?.cancel();
  }
  const rows = await app.query(
    `SELECT COUNT(*) AS n FROM auth_events WHERE subject = '${subject}' AND type = 'binding_proof_refused'`,
  );
  assert.equal(Number(rows[0].n), 1, "aggregated like login_failed");
  const { token } = (await api(app.origin, "POST", "/login", {
    email: OWNER,
    password: PASSWORD,
  })).body as { token: string };
  const activity = await api(
    app.origin,
    "GET",
    "/api/activity",
    undefined,
    bearer(token),
  );
  const types = (activity.body.events as { type: string }[]).map((e) => e.type);
  assert.ok(types.includes("session_bound"), "the binding is still listed");
  assert.ok(types.includes("registered"), "the oldest real entry too");
});
