// HMAC-SHA256 known-answer tests for the WebCrypto primitive the session layer signs with.
// RFC 4231 test cases 1-7, and the Wycheproof tagSize-256 cases from
// C2SP/wycheproof testvectors_v1/hmac_sha256_test.json (Apache-2.0), kept in ../vectors/.
import assert from "node:assert/strict";
import wycheproof from "../vectors/wycheproof_hmac_sha256.json" with {
  type: "json",
};

interface WycheproofCase {
  tcId: number;
  comment: string;
  key: string;
  msg: string;
  tag: string;
  result: "valid" | "invalid";
  flags: string[];
}

const enc = new TextEncoder();

function hex(s: string): Uint8Array<ArrayBuffer> {
  assert.equal(s.length % 2, 0, `odd-length hex: ${s}`);
  const out = new Uint8Array(s.length / 2);
  for (let i = 0; i < out.length; i++) {
    const byte = Number.parseInt(s.slice(2 * i, 2 * i + 2), 16);
    assert.ok(Number.isInteger(byte), `bad hex: ${s}`);
    out[i] = byte;
  }
  return out;
}

function toHex(bytes: ArrayBuffer | Uint8Array): string {
  return Array.from(
    new Uint8Array(bytes),
    (b) => b.toString(16).padStart(2, "0"),
  ).join("");
}

function repeat(byte: number, n: number): Uint8Array<ArrayBuffer> {
  return new Uint8Array(n).fill(byte);
}

function importHmacKey(key: Uint8Array<ArrayBuffer>): Promise<CryptoKey> {
  return crypto.subtle.importKey(
    "raw",
    key,
    { name: "HMAC", hash: "SHA-256" },
    false,
    ["sign", "verify"],
  );
}

interface Rfc4231Case {
  name: string;
  key: Uint8Array<ArrayBuffer>;
  data: Uint8Array<ArrayBuffer>;
  mac: string;
  /** Only this many leading bits of the output are specified (TC5). */
  truncatedBits?: number;
}

const rfc4231: Rfc4231Case[] = [
  {
    name: "TC1",
    key: repeat(0x0b, 20),
    data: enc.encode("Hi There"),
    mac: "b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7",
  },
  {
    name: "TC2",
    key: enc.encode("Jefe"),
    data: enc.encode("what do ya want for nothing?"),
    mac: "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843",
  },
  {
    name: "TC3",
    key: repeat(0xaa, 20),
    data: repeat(0xdd, 50),
    mac: "773ea91e36800e46854db8ebd09181a72959098b3ef8c122d9635514ced565fe",
  },
  {
    name: "TC4",
    key: Uint8Array.from({ length: 25 }, (_, i) => i + 1),
    data: repeat(0xcd, 50),
    mac: "82558a389a443c0ea4cc819899f2083a85f0faa3e578f8077a2e3ff46729665b",
  },
  {
    name: "TC5",
    key: repeat(0x0c, 20),
    data: enc.encode("Test With Truncation"),
    mac: "a3b6167473100ee06e0c796c2955552b",
    truncatedBits: 128,
  },
  {
    name: "TC6",
    key: repeat(0xaa, 131),
    data: enc.encode("Test Using Larger Than Block-Size Key - Hash Key First"),
    mac: "60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f0ee37f54",
  },
  {
    name: "TC7",
    key: repeat(0xaa, 131),
    data: enc.encode(
      "This is a test using a larger than block-size key and a larger than block-size data. " +
        "The key needs to be hashed before being used by the HMAC algorithm.",
    ),
    mac: "9b09ffa71b942fcb27635fbcd5b0e944bfdc63644f0713938a7f51535c3a35e2",
  },
];

Deno.test("HMAC-SHA256 matches RFC 4231 test cases 1-7 (sign and verify)", async () => {
  assert.equal(rfc4231.length, 7);
  for (const tc of rfc4231) {
    const key = await importHmacKey(tc.key);
    const sig = new Uint8Array(await crypto.subtle.sign("HMAC", key, tc.data));
    assert.equal(sig.length, 32, tc.name);
    // Full output always verifies.
    assert.equal(
      await crypto.subtle.verify("HMAC", key, sig, tc.data),
      true,
      tc.name,
    );
    if (tc.truncatedBits === undefined) {
      assert.equal(toHex(sig), tc.mac, tc.name);
    } else {
      const bytes = tc.truncatedBits / 8;
      assert.equal(toHex(sig.slice(0, bytes)), tc.mac, tc.name);
      // A truncated tag is not a valid HMAC-SHA256 tag for WebCrypto's verify: it must be rejected.
      assert.equal(
        await crypto.subtle.verify("HMAC", key, hex(tc.mac), tc.data),
        false,
        `${tc.name} truncated`,
      );
      assert.equal(
        await crypto.subtle.verify("HMAC", key, sig.slice(0, bytes), tc.data),
        false,
        `${tc.name} truncated`,
      );
    }
  }
});

Deno.test("crypto.subtle.verify accepts exactly the valid Wycheproof HMAC-SHA256 tagSize-256 cases", async () => {
  const cases = wycheproof.tests as WycheproofCase[];
  assert.match(wycheproof.source, /wycheproof/i);
  let valid = 0;
  let invalid = 0;
  for (const tc of cases) {
    const label = `tcId ${tc.tcId} (${tc.comment || "no comment"}, ${
      tc.flags.join(",")
    })`;
    const tag = hex(tc.tag);
    assert.equal(tag.length, 32, label);
    const key = await importHmacKey(hex(tc.key));
    const ok = await crypto.subtle.verify("HMAC", key, tag, hex(tc.msg));
    if (tc.result === "valid") {
      valid++;
      assert.equal(ok, true, label);
      assert.equal(
        toHex(await crypto.subtle.sign("HMAC", key, hex(tc.msg))),
        tc.tag,
        label,
      );
    } else {
      assert.equal(tc.result, "invalid", label);
      assert.deepEqual(tc.flags, ["ModifiedTag"], label);
      invalid++;
      assert.equal(ok, false, label);
    }
  }
  assert.equal(cases.length, 87);
  assert.equal(valid, 33);
  assert.equal(invalid, 54);
});
