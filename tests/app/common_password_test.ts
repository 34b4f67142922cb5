import assert from "node:assert/strict";
import { startApp } from "./_harness.ts";

Deno.test("item 13: registration refuses a common password with 422 and a clear message, storing nothing", async () => {
  await using app = await startApp();
  const res = await fetch(`${app.origin}/register`, {
    method: "POST",
    headers: { "content-type": "application/json", accept: "application/json" },
    body: JSON.stringify({
      email: "common@example.com",
      password: "1qaz2wsx3edc4rfv",
    }),
  });
  assert.equal(res.status, 422);
  assert.deepEqual(await res.json(), {
    error: "invalid_password",
    message: "That password is too common: choose another",
  });
  assert.equal(await app.credentials.findByEmail("common@example.com"), null);
  const form = await fetch(`${app.origin}/register`, {
    method: "POST",
    headers: { "content-type": "application/x-www-form-urlencoded" },
    body: "email=common%40example.com&password=q1w2e3r4t5y6u7i8",
  });
  assert.equal(form.status, 422);
  assert.match(await form.text(), /too common/);
});
