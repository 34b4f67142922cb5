// Property tests of the DPoP proof parser and verifier (outside input).
import assert from "node:assert/strict";
import fc from "fast-check";
import { DpopVerifier } from "../../lib/binding/dpop_proof.ts";
import { parseCompactJws } from "../../lib/binding/proof_jwt.ts";

const enc = new TextEncoder();
const b64u = (bytes: Uint8Array) =>
  btoa(String.fromCharCode(...bytes)).replace(/\+/g, "-").replace(/\//g, "_")
    .replace(/=+$/, "");

Deno.test("parseCompactJws never throws and accepts only three base64url JSON-object parts", () => {
  fc.assert(
    fc.property(
      fc.oneof(fc.string(), fc.fullUnicodeString(), fc.anything()),
      (v) => {
        const parsed = parseCompactJws(v);
        if (parsed !== null) {
          assert.equal(typeof v, "string");
          assert.equal((v as string).split(".").length, 3);
          assert.equal(typeof parsed.header, "object");
        }
      },
    ),
    { numRuns: 2000 },
  );
});

Deno.test("any one-character change of a valid proof is refused", async () => {
  const pair = await crypto.subtle.generateKey(
    { name: "ECDSA", namedCurve: "P-256" },
    true,
    ["sign", "verify"],
  );
  const jwk = await crypto.subtle.exportKey("jwk", pair.publicKey);
  const header = b64u(enc.encode(JSON.stringify({
    typ: "dpop+jwt",
    alg: "ES256",
    jwk: { kty: "EC", crv: "P-256", x: jwk.x, y: jwk.y },
  })));
  const now = Date.now();
  const proofFor = async (jti: string) => {
    const payload = b64u(enc.encode(JSON.stringify({
      jti,
      htm: "GET",
      htu: "https://api.example/r",
      iat: Math.floor(now / 1000),
    })));
    const sig = new Uint8Array(
      await crypto.subtle.sign(
        { name: "ECDSA", hash: "SHA-256" },
        pair.privateKey,
        enc.encode(`${header}.${payload}`),
      ),
    );
    return `${header}.${payload}.${b64u(sig)}`;
  };
  const req = new Request("https://api.example/r");
  const verifier = new DpopVerifier({ now: () => now });
  await fc.assert(
    fc.asyncProperty(
      fc.nat(),
      fc.constantFrom(
        ..."ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_.=+/ ",
      ),
      async (at, ch) => {
        const proof = await proofFor(crypto.randomUUID());
        const i = at % proof.length;
        if (proof[i] === ch) return;
        const bad = proof.slice(0, i) + ch + proof.slice(i + 1);
        const result = await verifier.verify(bad, req, null);
        assert.equal(result.ok, false, `changed at ${i}`);
      },
    ),
    { numRuns: 300 },
  );
  // And the unchanged proof passes once.
  const ok = await verifier.verify(await proofFor("fresh"), req, null);
  assert.equal(ok.ok, true);
});
