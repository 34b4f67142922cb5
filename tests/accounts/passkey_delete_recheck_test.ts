/**
 * The re-check of `POST /account/passkeys/delete` answers as every other
 * re-check route does, `POST /account/delete` first (outside tester's LOW
 * finding 3 against the passkeys, where the contract read as 403 for a
 * missing password): an account with a password that sends none gets what
 * a wrong password gets, 401 `invalid_credentials`; an account without a
 * password and no fresh re-authentication gets 403
 * `reauthentication_required`. Nothing is removed either way, and
 * `docs/http_contract.md` says so in both rows.
 *
 * @module
 */
import assert from "node:assert/strict";
import { ORIGIN, startTestApp } from "../../examples/app/testing.ts";
import { SoftAuthenticator } from "../support/soft_authenticator.ts";

const PASSWORD = "correct horse battery";

Deno.test("POST /account/passkeys/delete without the password answers as POST /account/delete does: 401 invalid_credentials, and removes nothing", async () => {
  const app = await startTestApp({ PASSKEYS: "on" });
  const { token, subject } = await app.verifiedUser(
    "recheck@example.com",
    PASSWORD,
  );
  const options = await app.call("POST", "/passkeys/register/options", {
    password: PASSWORD,
  }, token);
  const added = await app.call("POST", "/passkeys/register", {
    response: await new SoftAuthenticator(ORIGIN).create(options.json),
    name: "Laptop",
  }, token);
  assert.equal(added.res.status, 201, added.text);
  const id = added.json.id;
  const passkey = await app.call(
    "POST",
    "/account/passkeys/delete",
    { id },
    token,
  );
  const account = await app.call("POST", "/account/delete", {}, token);
  assert.equal(passkey.res.status, 401);
  assert.equal(passkey.res.status, account.res.status);
  assert.equal(passkey.json.error, "invalid_credentials");
  assert.equal(passkey.json.error, account.json.error);
  const form = { form: true, headers: { accept: "text/html" } };
  const passkeyForm = await app.call(
    "POST",
    "/account/passkeys/delete",
    { id },
    token,
    form,
  );
  const accountForm = await app.call(
    "POST",
    "/account/delete",
    {},
    token,
    form,
  );
  assert.equal(passkeyForm.res.status, 401);
  assert.equal(accountForm.res.status, 401);
  // Nothing removed: the passkey, and the account.
  const page = await app.call("GET", "/account", undefined, token, {
    headers: { accept: "text/html" },
  });
  assert.equal(page.res.status, 200);
  assert.match(page.text, /value="Laptop"/);
  assert.notEqual(await app.credentials.findById(subject), null);
  app.close();
});

Deno.test("POST /account/passkeys/delete of an account without a password and no re-authentication: 403 reauthentication_required, as POST /account/delete", async () => {
  const app = await startTestApp({ PASSKEYS: "on" });
  const started = await app.call("POST", "/passkeys/signup/options", {
    email: "only@example.com",
  });
  const key = new SoftAuthenticator(ORIGIN);
  const made = await app.call("POST", "/passkeys/signup", {
    pending: started.json.pending,
    response: await key.create(started.json.options),
    name: "Laptop",
  });
  assert.equal(made.res.status, 201, made.text);
  const token = made.json.token;
  const passkey = await app.call("POST", "/account/passkeys/delete", {
    id: key.id,
    password: PASSWORD,
  }, token);
  const account = await app.call("POST", "/account/delete", {
    password: PASSWORD,
  }, token);
  assert.equal(passkey.res.status, 403);
  assert.equal(passkey.json.error, "reauthentication_required");
  assert.equal(account.res.status, 403);
  assert.equal(account.json.error, "reauthentication_required");
  assert.notEqual(await app.credentials.findByEmail("only@example.com"), null);
  app.close();
});

Deno.test("docs/http_contract.md: the rows of the passkey's and the account's deletion give the same re-check answers", async () => {
  const doc = await Deno.readTextFile(
    new URL("../../docs/http_contract.md", import.meta.url),
  );
  for (const route of ["/account/passkeys/delete", "/account/delete"]) {
    const row = doc.split("\n").find((l) =>
      l.startsWith(`| POST \`${route}\``)
    );
    assert.ok(row, route);
    assert.match(
      row,
      /wrong or missing password: 401 `invalid_credentials`/,
      route,
    );
    assert.match(
      row,
      /an account without a password and no fresh re-authentication: 403 `reauthentication_required`/,
      route,
    );
  }
});
