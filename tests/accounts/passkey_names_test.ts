/**
 * A passkey's name (outside tester's LOW finding 4 against the passkeys):
 * one with a bidirectional override or isolate, a zero-width or other
 * invisible character, a control character, or longer than 64 characters
 * is refused as an API key's name is (422 `invalid_name`), at registration,
 * at sign-up and at rename, and changes nothing: no passkey, no account, no
 * new name. The API refuses it too (`invalid_name`), before the challenge is
 * spent.
 *
 * @module
 */
import assert from "node:assert/strict";
import { ORIGIN, startTestApp } from "../../examples/app/testing.ts";
import { SoftAuthenticator } from "../support/soft_authenticator.ts";
import {
  MemoryPasskeyStore,
  PasskeyAuthenticator,
} from "../../packages/passkeys/mod.ts";
import { purposeSigner } from "../packages/_signers.ts";

const PASSWORD = "correct horse battery";

const BAD_NAMES = [
  "Laptop\u202egpj.exe", // right-to-left override
  "Phone\u2066x\u2069", // isolates
  "Key\u200b", // zero width space
  "Ke\ufeffy", // byte-order mark (at either end, trimming removes it)
  "Work\u200fkey", // right-to-left mark
  "Bell\u0007", // a control character
  "x".repeat(65),
];

Deno.test("passkey names: registration refuses invisible and direction-changing characters (422 invalid_name), adds nothing, and the same answer then passes under a good name", async () => {
  const app = await startTestApp({ PASSKEYS: "on" });
  const { token, subject } = await app.verifiedUser(
    "names@example.com",
    PASSWORD,
  );
  const options = await app.call("POST", "/passkeys/register/options", {
    password: PASSWORD,
  }, token);
  const key = new SoftAuthenticator(ORIGIN);
  const response = await key.create(options.json);
  for (const name of BAD_NAMES) {
    const refused = await app.call("POST", "/passkeys/register", {
      response,
      name,
    }, token);
    assert.equal(refused.res.status, 422, JSON.stringify(name));
    assert.equal(refused.json.error, "invalid_name");
    assert.equal(typeof refused.json.message, "string");
  }
  const page = async () =>
    (await app.call("GET", "/account", undefined, token, {
      headers: { accept: "text/html" },
    })).text;
  assert.doesNotMatch(await page(), /passkey-rename-/, "no passkey added");
  const added = await app.call("POST", "/passkeys/register", {
    response,
    name: "  Laptop  ",
  }, token);
  assert.equal(added.res.status, 201, added.text);
  assert.equal(added.json.name, "Laptop");

  // Rename: refused the same way, the name kept.
  for (const name of BAD_NAMES) {
    const refused = await app.call("POST", "/account/passkeys/rename", {
      id: added.json.id,
      name,
    }, token);
    assert.equal(refused.res.status, 422, JSON.stringify(name));
    assert.equal(refused.json.error, "invalid_name");
  }
  const form = await app.call(
    "POST",
    "/account/passkeys/rename",
    {
      id: added.json.id,
      name: "Phone\u202e",
    },
    token,
    { form: true, headers: { accept: "text/html" } },
  );
  assert.equal(form.res.status, 422);
  assert.match(form.res.headers.get("content-type") ?? "", /text\/html/);
  assert.match(await page(), /value="Laptop"/);
  const renamed = await app.call("POST", "/account/passkeys/rename", {
    id: added.json.id,
    name: "Work phone",
  }, token);
  assert.equal(renamed.res.status, 204);
  assert.match(await page(), /value="Work phone"/);
  void subject;
  app.close();
});

Deno.test("passkey names: a passkey-only sign-up with a refused name makes no account (422 invalid_name)", async () => {
  const app = await startTestApp({ PASSKEYS: "on" });
  const started = await app.call("POST", "/passkeys/signup/options", {
    email: "bidi@example.com",
  });
  assert.equal(started.res.status, 200, started.text);
  const refused = await app.call("POST", "/passkeys/signup", {
    pending: started.json.pending,
    response: await new SoftAuthenticator(ORIGIN).create(
      started.json.options,
    ),
    name: "Laptop\u202e",
    next: "/account",
  });
  assert.equal(refused.res.status, 422, refused.text);
  assert.equal(refused.json.error, "invalid_name");
  assert.equal(refused.json.token, undefined);
  assert.equal(await app.credentials.findByEmail("bidi@example.com"), null);
  app.close();
});

Deno.test("PasskeyAuthenticator.register() refuses a name with a direction-changing character (invalid_name) before spending the challenge", async () => {
  const store = new MemoryPasskeyStore();
  const passkeys = new PasskeyAuthenticator({
    rpId: "localhost",
    rpName: "Test",
    origins: [ORIGIN],
    store,
    challenges: store,
    signer: purposeSigner("webauthn-challenge"),
  });
  const options = await passkeys.registrationOptions({
    subject: "user_1",
    email: "a@example.com",
  });
  const response = await new SoftAuthenticator(ORIGIN).create(
    options as never,
  );
  for (const name of BAD_NAMES) {
    assert.deepEqual(await passkeys.register("user_1", response, name), {
      kind: "refused",
      reason: "invalid_name",
    });
  }
  assert.deepEqual(await store.listFor("user_1"), []);
  const ok = await passkeys.register("user_1", response, "");
  assert.equal(ok.kind, "ok");
  assert.equal((await store.listFor("user_1"))[0].name, "Passkey");
});
