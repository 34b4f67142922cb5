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
import { api, bearer, registerJson, startApp } from "./_harness.ts";

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
