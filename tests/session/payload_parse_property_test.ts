// The session payload parser reads `subject|jti|expiry` (and, for a session
// an operator holds, `subject|jti|expiry|actor`) in one pass over the
// bytes. These properties hold it to the rules it had as a string parser
// with regular expressions (kept below as the reference), and to the
// encoder: whatever it accepts, the encoder would have produced.
import assert from "node:assert/strict";
import fc from "fast-check";
import {
  encodeSessionPayload,
  newJti,
  parseSessionPayload,
} from "../../lib/session/session_payload.ts";
import { decodeBase64Url } from "../../lib/_common/base64url.ts";
import { inCI } from "../support/services.ts";

const RUNS = inCI ? 50_000 : 5_000;
const utf8 = new TextDecoder("utf-8", { fatal: true });

/** The rules as regular expressions, plus the jti's canonical form. */
function reference(payload: Uint8Array) {
  let text: string;
  try {
    text = utf8.decode(payload);
  } catch {
    return null;
  }
  const parts = text.split("|");
  if (parts.length !== 3 && parts.length !== 4) return null;
  const [subject, jti, expiry, actor] = parts;
  if (
    actor !== undefined &&
    (actor.length === 0 ||
      // deno-lint-ignore no-control-regex
      /[\u0000-\u001f\u007f-\u009f|]/.test(actor) ||
      new TextEncoder().encode(actor).length > 255)
  ) return null;
  if (
    subject.length === 0 ||
    // deno-lint-ignore no-control-regex
    /[\u0000-\u001f\u007f-\u009f|]/.test(subject) ||
    !/^[A-Za-z0-9_-]{30}$/.test(jti) || !/^[1-9][0-9]{0,15}$/.test(expiry)
  ) return null;
  const bytes = decodeBase64Url(jti);
  if (bytes === null) return null; // not canonical
  const expiresAt = Number(expiry);
  if (!Number.isSafeInteger(expiresAt)) return null;
  let issuedAt = 0;
  for (let i = 0; i < 6; i++) issuedAt = issuedAt * 256 + bytes[i];
  return actor === undefined
    ? { subject, jti, issuedAt, expiresAt }
    : { subject, jti, issuedAt, expiresAt, actor };
}

const JTI_CHARS =
  "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
const validIdentity = fc.record({
  subject: fc.oneof(
    fc.stringMatching(/^[a-z0-9_@.-]{1,40}$/),
    // Any text the subject rule allows: no `|`, no control characters (the
    // generator once made "| ", which no issue() would mint).
    fc.string({ minLength: 1, maxLength: 20, unit: "grapheme" }).filter((s) =>
      // deno-lint-ignore no-control-regex -- the subject rule's own characters
      !/[\u0000-\u001f\u007f-\u009f|]/.test(s)
    ),
  ),
  issuedAt: fc.integer({ min: 0, max: 2 ** 48 - 1 }),
  random: fc.uint8Array({ minLength: 16, maxLength: 16 }),
  expiresAt: fc.integer({ min: 1, max: Number.MAX_SAFE_INTEGER }),
  actor: fc.option(fc.stringMatching(/^[A-Za-z0-9_-]{1,30}$/), {
    nil: undefined,
  }),
});

Deno.test(`session payload: the one-pass parser agrees with the reference rules on near-valid bytes (${RUNS} cases)`, () => {
  const enc = new TextEncoder();
  const edit = fc.oneof(
    fc.record({ at: fc.nat(), byte: fc.integer({ min: 0, max: 255 }) }),
    fc.record({
      at: fc.nat(),
      byte: fc.constantFrom(
        0x7c,
        0x30,
        0x2d,
        0x5f,
        0x2b,
        0x2f,
        0x3d,
        0x00,
        0x7f,
        0xc2,
        0x85,
        0xff,
        ...[...JTI_CHARS].map((c) => c.charCodeAt(0)),
      ),
    }),
  );
  fc.assert(
    fc.property(
      validIdentity,
      fc.array(edit, { maxLength: 3 }),
      fc.boolean(),
      (id, edits, truncate) => {
        const jti = newJti(id.issuedAt, id.random);
        let bytes = encodeSessionPayload({
          subject: id.subject,
          jti,
          issuedAt: id.issuedAt,
          expiresAt: id.expiresAt,
          ...(id.actor === undefined ? {} : { actor: id.actor }),
        });
        bytes = bytes.slice();
        for (const e of edits) bytes[e.at % bytes.length] = e.byte;
        if (truncate && bytes.length > 1) {
          bytes = bytes.subarray(0, bytes.length - 1);
        }
        const got = parseSessionPayload(bytes);
        const want = reference(bytes);
        assert.deepEqual(got === null ? null : { ...got }, want);
        if (got !== null) {
          // Accepted means: the encoder makes exactly these bytes.
          assert.deepEqual(encodeSessionPayload(got), bytes);
        }
        // Sanity of the generator: the untouched payload always parses.
        if (edits.length === 0 && !truncate) {
          assert.notEqual(got, null);
          assert.equal(got!.issuedAt, id.issuedAt);
          assert.equal(got!.jti, jti);
          assert.equal(got!.subject, id.subject);
          assert.equal(got!.actor, id.actor);
        }
        return true;
      },
    ),
    { numRuns: RUNS },
  );
  // Random byte strings: both refuse alike.
  fc.assert(
    fc.property(fc.uint8Array({ maxLength: 80 }), (bytes) => {
      const got = parseSessionPayload(bytes);
      assert.deepEqual(got === null ? null : { ...got }, reference(bytes));
    }),
    { numRuns: RUNS },
  );
  assert.equal(parseSessionPayload(enc.encode("a|b|1")), null);
});

Deno.test("session payload: a jti in non-canonical form (trailing bits set) is refused", () => {
  const jti = newJti(Date.UTC(2026, 0, 1), new Uint8Array(16));
  const good = new TextEncoder().encode(`u|${jti}|1900000000`);
  assert.notEqual(parseSessionPayload(good), null);
  // The last character carries 2 bits of data: 'A' → 'B' sets a padding bit.
  const bad = new TextEncoder().encode(`u|${jti.slice(0, 29)}B|1900000000`);
  assert.equal(jti.at(-1), "A");
  assert.equal(parseSessionPayload(bad), null);
});

Deno.test("session payload: a subject that begins with U+FEFF keeps it (no BOM stripping)", async () => {
  const { SessionManager, SecretProvider } = await import("../../mod.ts");
  const sessions = new SessionManager({
    secret: SecretProvider.fromValue(
      "2CfJ4Z1xPNTmdOfwXz46CNaE1hL23uCU4bjYaqqzE88=",
    ),
    store: null,
  });
  const token = await sessions.issue("\uFEFFadmin");
  const identity = await sessions.resolve(token);
  assert.equal(identity?.subject, "\uFEFFadmin");
  assert.notEqual(identity?.subject, "admin");
});
