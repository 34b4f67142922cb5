/**
 * Email verification over HTTP: an unproven account creates no notes; the
 * mailed link shows a confirmation form (GET changes nothing), another
 * browser confirms with the account's password, and a link works once.
 *
 * @module
 */
import assert from "node:assert/strict";
import { startTestApp } from "../../examples/app/testing.ts";

Deno.test("verification: notes wait for the proof; POST /verify redeems the mailed link once", async () => {
  const { call, mail, close } = await startTestApp();
  const password = "correct horse battery";
  const owner = (await call("POST", "/register", {
    email: "o@example.com",
    password,
  })).json;
  const unverified = await call(
    "POST",
    "/api/notes",
    { text: "hi" },
    owner.token,
  );
  assert.equal(unverified.res.status, 403);
  const link = new URL(mail[0].match(/link=(\S+)/)![1]);
  // GET /verify only shows a confirmation form; POST /verify redeems.
  assert.equal(
    (await call("GET", link.pathname + link.search)).res.status,
    200,
  );
  const token = link.searchParams.get("token");
  // Another browser confirms with the account's password.
  assert.equal((await call("POST", "/verify", { token })).res.status, 401);
  const verified = await call("POST", "/verify", { token, password });
  assert.equal(verified.res.status, 200);
  assert.equal(verified.json.verified, true);
  assert.equal(
    (await call("POST", "/verify", { token, password })).res.status,
    400,
  );
  const note = await call("POST", "/api/notes", { text: "hi" }, owner.token);
  assert.equal(note.res.status, 201);
  close();
});
