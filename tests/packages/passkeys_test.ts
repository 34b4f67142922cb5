import assert from "node:assert/strict";
import {
  MemoryPasskeyStore,
  PasskeyAuthenticator,
} from "../../packages/passkeys/mod.ts";
import { PASSKEYS_BROWSER_SCRIPT } from "../../packages/passkeys/browser_script.ts";
import { purposeSigner } from "./_signers.ts";

function make() {
  const store = new MemoryPasskeyStore();
  const passkeys = new PasskeyAuthenticator({
    rpId: "localhost",
    rpName: "Test",
    origins: ["http://localhost:8000"],
    store,
    challenges: store,
    signer: purposeSigner("webauthn-challenge"),
  });
  return { store, passkeys };
}

Deno.test("PasskeyAuthenticator: options carry a signed single-use challenge, discoverable credentials and required user verification", async () => {
  const { passkeys, store } = make();
  // deno-lint-ignore no-explicit-any
  const reg: any = await passkeys.registrationOptions({
    subject: "user_1",
    email: "a@example.com",
  });
  assert.equal(reg.rp.id, "localhost");
  assert.equal(reg.authenticatorSelection?.residentKey, "required");
  assert.equal(reg.authenticatorSelection?.userVerification, "required");
  assert.equal(reg.attestation, "none");
  const challenge = new TextDecoder().decode(
    Uint8Array.from(
      atob(reg.challenge.replace(/-/g, "+").replace(/_/g, "/")),
      (c) => c.charCodeAt(0),
    ),
  );
  assert.match(challenge, /^v1\.[A-Za-z0-9_-]{8}\./, "a purpose-signed value");
  // deno-lint-ignore no-explicit-any
  const auth: any = await passkeys.authenticationOptions();
  assert.equal(auth.userVerification, "required");
  assert.deepEqual(auth.allowCredentials ?? [], []);
  assert.notEqual(auth.challenge, reg.challenge);
  void store;
});

Deno.test("PasskeyAuthenticator: malformed and unknown credentials are refused without throwing", async () => {
  const { passkeys } = make();
  for (const bad of [null, {}, { id: 5 }, { id: "x".repeat(2000) }]) {
    assert.deepEqual(await passkeys.authenticate(bad), {
      kind: "refused",
      reason: "malformed",
    });
  }
  assert.deepEqual(
    await passkeys.authenticate({ id: "unknown", response: {} }),
    { kind: "refused", reason: "unknown_credential" },
  );
  assert.equal(
    (await passkeys.register("user_1", { id: "x", response: {} }, "n")).kind,
    "refused",
  );
});

Deno.test("PasskeyAuthenticator: the constructor refuses a missing or malformed origin", () => {
  const store = new MemoryPasskeyStore();
  const base = {
    rpId: "localhost",
    rpName: "Test",
    store,
    challenges: store,
    signer: purposeSigner("webauthn-challenge"),
  };
  assert.throws(
    () => new PasskeyAuthenticator({ ...base, origins: [] }),
    TypeError,
  );
  assert.throws(
    () =>
      new PasskeyAuthenticator({
        ...base,
        origins: ["http://localhost:8000/"],
      }),
    /scheme:\/\/host/,
  );
});

Deno.test("the served browser module bundles @portcullis/client and imports nothing from elsewhere", () => {
  assert.ok(PASSKEYS_BROWSER_SCRIPT.length > 2000);
  assert.match(PASSKEYS_BROWSER_SCRIPT, /passkey-login/);
  assert.match(PASSKEYS_BROWSER_SCRIPT, /navigator\??\.credentials/);
  assert.match(PASSKEYS_BROWSER_SCRIPT, /signalAllAcceptedCredentials/);
  // No import of another module, no request to another origin (the only
  // URL inside is a documentation link in one of the library's warnings).
  assert.doesNotMatch(PASSKEYS_BROWSER_SCRIPT, /\bimport\s*[{(*"']/);
  assert.doesNotMatch(PASSKEYS_BROWSER_SCRIPT, /fetch\(\s*["'`]https?:/);
});
