// The session manager's cold path reads payloads through verifyTokenText
// (checked in place, decoded by atob once the MAC holds): it must accept and
// refuse exactly what verifyToken does, and answer the same bytes
// (SECURITY.md 19–21).
import assert from "node:assert/strict";
import { SecretProvider } from "../../mod.ts";
import {
  signToken,
  verifyToken,
  verifyTokenText,
} from "../../lib/tokens/signed_token.ts";
import {
  parseSessionPayload,
  parseSessionPayloadText,
} from "../../lib/session/session_payload.ts";
import { SECRET } from "./_helpers.ts";

const ALPHABET =
  "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_.=+/ ~é";

function binary(bytes: Uint8Array): string {
  return Array.from(bytes, (b) => String.fromCharCode(b)).join("");
}

Deno.test("verifyTokenText answers what verifyToken answers, for valid tokens and every single-character change, cut and extension", async () => {
  const keys = await SecretProvider.fromValue(SECRET).keys("session");
  const payloads = [
    "user_1|AZq1b2c3d4e5f6g7h8i9j0kLmNoPqA|1798000000",
    "ü-ser|AZq1b2c3d4e5f6g7h8i9j0kLmNoPqA|1798000000|op_1",
    "a", // any bytes: the token layer does not read them
    "ab",
    "abc",
  ];
  let compared = 0;
  for (const text of payloads) {
    const token = await signToken(
      keys.current,
      "session",
      new TextEncoder().encode(text),
    );
    const variants = [token, token + "A", token.slice(0, -1)];
    for (let i = 0; i < token.length; i++) {
      for (const c of [ALPHABET[i % ALPHABET.length], "A", "_", "="]) {
        if (c !== token[i]) {
          variants.push(token.slice(0, i) + c + token.slice(i + 1));
        }
      }
    }
    for (const v of variants) {
      const bytes = await verifyToken(keys, "session", v);
      const text = await verifyTokenText(keys, "session", v);
      assert.equal(text, bytes === null ? null : binary(bytes), v);
      compared++;
    }
  }
  assert.ok(compared > 1000);
});

Deno.test("parseSessionPayloadText is parseSessionPayload of the same bytes, and refuses characters above 255", () => {
  const cases = [
    "user_1|AZq1b2c3d4e5f6g7h8i9j0kLmNoPqA|1798000000",
    "user_1|AZq1b2c3d4e5f6g7h8i9j0kLmNoPqA|1798000000|op_1",
    "ü|AZq1b2c3d4e5f6g7h8i9j0kLmNoPqA|1798000000",
    "user_1|AZq1b2c3d4e5f6g7h8i9j0kLmNoPqB|1798000000",
    "user_1|AZq1b2c3d4e5f6g7h8i9j0kLmNoPqA|0179800000",
    "|AZq1b2c3d4e5f6g7h8i9j0kLmNoPqA|1798000000",
    "a\u0001|AZq1b2c3d4e5f6g7h8i9j0kLmNoPqA|1798000000",
  ];
  for (const c of cases) {
    const bytes = new TextEncoder().encode(c);
    assert.deepEqual(
      parseSessionPayloadText(binary(bytes)),
      parseSessionPayload(bytes),
      c,
    );
  }
  const invalidUtf8 = new Uint8Array([
    0xc3,
    ...new TextEncoder().encode("|AZq1b2c3d4e5f6g7h8i9j0kLmNoPqA|1798000000"),
  ]);
  assert.equal(parseSessionPayloadText(binary(invalidUtf8)), null);
  assert.equal(
    parseSessionPayloadText("\u0100|AZq1b2c3d4e5f6g7h8i9j0kLmNoPqA|1798000000"),
    null,
  );
  assert.equal(
    parseSessionPayloadText("user_1|AZq1b2c3d4e5f6g7h8i9j0kLmNoPqA|1798000000")
      ?.subject,
    "user_1",
  );
});
