// Issue 27 finding 5: the secrets printed in the docs were accepted, so a
// developer who copied an example shipped a public secret. Every secret the
// documentation printed is refused through the "paste mistake" checks; this
// test scans the docs (docs/, every README, the changelog, every JSDoc and
// comment of the published code, and every `fromValue("…")` outside the
// tests) for text that could be a secret (base64 or hex of 32 bytes or more)
// and fails when one is accepted: a new example secret must be added to
// lib/secrets/_published_secrets.ts.
import assert from "node:assert/strict";
import { join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import { SecretProvider } from "../../mod.ts";

const ROOT = fileURLToPath(new URL("../../", import.meta.url));
const SKIP_DIRS = new Set([
  "node_modules",
  ".git",
  "tests",
  "bench",
  "dist",
  "data",
  ".ci",
]);
// Generated from examples/app (scanned there) and a WebAssembly blob.
const SKIP_FILES = new Set([
  "packages/scaffold/_templates.ts",
  "packages/hashers/pbkdf2_wasm/_pbkdf2_wasm_bytes.ts",
]);
const CANDIDATE = /(?<![A-Za-z0-9+/_-])[A-Za-z0-9+/_-]{43,}={0,2}/g;

async function* files(dir: string): AsyncGenerator<string> {
  for await (const entry of Deno.readDir(dir)) {
    const path = join(dir, entry.name);
    if (entry.isDirectory) {
      if (!SKIP_DIRS.has(entry.name)) yield* files(path);
    } else if (/\.(md|ts|tsx)$/.test(entry.name)) {
      if (!SKIP_FILES.has(relative(ROOT, path))) yield path;
    }
  }
}

/** The documentation text of a file: all of a Markdown file; a script's comments and `fromValue` literals. */
function docText(path: string, text: string): string[] {
  if (path.endsWith(".md")) return [text];
  const parts = [
    ...text.matchAll(/\/\*[\s\S]*?\*\//g),
    ...text.matchAll(/\/\/[^\n]*/g),
    ...text.matchAll(/fromValue\(\s*["'`]([^"'`]+)["'`]/g),
  ];
  return parts.map((m) => m[1] ?? m[0]);
}

function refused(secret: string): boolean {
  try {
    SecretProvider.fromValue(secret);
    return false;
  } catch (error) {
    return error instanceof RangeError || error instanceof TypeError;
  }
}

Deno.test("issue 27 finding 5: every secret the docs, READMEs and JSDoc print is refused", async () => {
  const accepted: string[] = [];
  let scanned = 0;
  let candidates = 0;
  for await (const path of files(ROOT)) {
    scanned++;
    const text = await Deno.readTextFile(path);
    for (const part of docText(path, text)) {
      for (const [match] of part.matchAll(CANDIDATE)) {
        // Hyphenated words and rules of dashes are not secrets.
        if (/^[a-z-]+$/i.test(match) && match.includes("-")) continue;
        candidates++;
        if (!refused(match)) accepted.push(`${relative(ROOT, path)}: ${match}`);
      }
    }
  }
  assert.ok(scanned > 200, `scanned ${scanned} files`);
  assert.ok(candidates > 0, "the scan finds candidates (the docs' tables)");
  assert.deepEqual(
    accepted,
    [],
    "a secret printed in the docs is accepted: add its digest to lib/secrets/_published_secrets.ts",
  );
});

Deno.test("issue 27 finding 5: the secrets earlier versions printed are refused, padded or not, in either base64 alphabet", () => {
  const published = [
    "19CRqcgP/VC3Dlx2GK5guv7BIfJjXBwWoyeP1VwPfnI=",
    "q0uV8n4cJmPZQ1l9hS2bT7yWkRfXe3oAa6dGvNiLz5E=",
    "0YXV2G8SDiuQrIbDvu3wVQSUMC7dd0KMkfthgxfQhNk=",
  ];
  for (const secret of published) {
    const forms = [
      secret,
      secret.replace(/=+$/, ""),
      secret.replaceAll("+", "-").replaceAll("/", "_"),
    ];
    for (const form of forms) {
      assert.throws(
        () => SecretProvider.fromValue(form),
        (e: unknown) =>
          e instanceof RangeError &&
          e.message ===
            "The secret is an example printed in portcullis's documentation, so it is public: generate one with `openssl rand -base64 32`",
        form,
      );
      assert.throws(
        () =>
          SecretProvider.fromEnv("AUTH_SECRET", { env: { AUTH_SECRET: form } }),
        /^RangeError: AUTH_SECRET is an example printed in portcullis's documentation/,
      );
      assert.throws(
        () =>
          SecretProvider.fromEnv("AUTH_SECRET", {
            env: {
              AUTH_SECRET: btoa(
                String.fromCharCode(
                  ...crypto.getRandomValues(new Uint8Array(32)),
                ),
              ),
              AUTH_PREVIOUS_SECRETS: form,
            },
          }),
        /^RangeError: Previous secret #1 is an example printed/,
      );
    }
  }
  // A fresh secret still passes.
  const fresh = btoa(
    String.fromCharCode(...crypto.getRandomValues(new Uint8Array(32))),
  );
  assert.equal(SecretProvider.fromValue(fresh).size, 1);
});

// Lows 27 finding 1: the printed secrets were refused only as the base64
// text they were printed in. The same 32 bytes as hex (either case, or
// mixed) or as raw bytes were accepted, as the secret and as a previous
// one. Every form of a key's bytes that SecretProvider accepts is tried.

function toHex(bytes: Uint8Array): string {
  return Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("");
}

function toBase64(bytes: Uint8Array): string {
  return btoa(String.fromCharCode(...bytes));
}

/** Every form of `bytes` a secret may be given in. */
function forms(
  bytes: Uint8Array,
): { label: string; value: string | Uint8Array }[] {
  const std = toBase64(bytes);
  const url = std.replaceAll("+", "-").replaceAll("/", "_");
  const hex = toHex(bytes);
  const mixed = Array.from(
    hex,
    (c, i) => i % 2 === 0 ? c.toUpperCase() : c,
  ).join("");
  return [
    { label: "base64", value: std },
    { label: "base64, unpadded", value: std.replace(/=+$/, "") },
    { label: "base64url", value: url },
    { label: "base64url, unpadded", value: url.replace(/=+$/, "") },
    { label: "hex", value: hex },
    { label: "HEX", value: hex.toUpperCase() },
    { label: "hex, mixed case", value: mixed },
    { label: "raw bytes", value: bytes.slice() },
  ];
}

/** The key bytes a printed candidate stands for: hex decoded, else base64. */
function keyBytes(candidate: string): Uint8Array {
  const data = candidate.replace(/=+$/, "");
  if (/^[0-9a-fA-F]+$/.test(data) && data.length % 2 === 0) {
    return Uint8Array.from(
      data.match(/../g)!,
      (pair) => parseInt(pair, 16),
    );
  }
  const std = data.replaceAll("-", "+").replaceAll("_", "/");
  const whole = std.slice(0, std.length - (std.length % 4));
  const extra = std.slice(whole.length);
  const padded = extra.length >= 2
    ? whole + extra + "=".repeat(4 - extra.length)
    : whole;
  return Uint8Array.from(atob(padded), (c) => c.charCodeAt(0));
}

const PUBLISHED_MESSAGE =
  "is an example printed in portcullis's documentation, so it is public";

function refusedAsPublished(
  build: () => unknown,
): boolean {
  try {
    build();
    return false;
  } catch (error) {
    return error instanceof RangeError &&
      error.message.includes(PUBLISHED_MESSAGE);
  }
}

const EARLIER = [
  "19CRqcgP/VC3Dlx2GK5guv7BIfJjXBwWoyeP1VwPfnI=",
  "q0uV8n4cJmPZQ1l9hS2bT7yWkRfXe3oAa6dGvNiLz5E=",
  "0YXV2G8SDiuQrIbDvu3wVQSUMC7dd0KMkfthgxfQhNk=",
];

Deno.test("lows 27 finding 1: the tester's hex of the docs' secret is refused, as the secret, a previous secret, and by fromEnv", () => {
  const hex =
    "d7d091a9c80ffd50b70e5c7618ae60bafec121f2635c1c16a3278fd55c0f7e72";
  assert.equal(toHex(keyBytes(EARLIER[0])), hex);
  const fresh = toBase64(crypto.getRandomValues(new Uint8Array(32)));
  assert.throws(
    () => SecretProvider.fromValue(hex),
    (e: unknown) =>
      e instanceof RangeError &&
      e.message ===
        "The secret is an example printed in portcullis's documentation, so it is public: generate one with `openssl rand -base64 32`",
  );
  assert.throws(
    () => SecretProvider.fromValue(fresh, [hex.toUpperCase()]),
    /^RangeError: Previous secret #1 is an example printed/,
  );
  assert.throws(
    () => SecretProvider.fromEnv("AUTH_SECRET", { env: { AUTH_SECRET: hex } }),
    /^RangeError: AUTH_SECRET is an example printed/,
  );
  assert.throws(
    () =>
      SecretProvider.fromEnv("AUTH_SECRET", {
        env: { AUTH_SECRET: fresh, AUTH_PREVIOUS_SECRETS: `${fresh},${hex}` },
      }),
    /^RangeError: Previous secret #2 is an example printed/,
  );
  assert.throws(
    () => SecretProvider.fromValue(keyBytes(EARLIER[0])),
    /^RangeError: The secret is an example printed/,
  );
  // The text's own bytes as a Uint8Array are its UTF-8, the same key as the
  // text: refused as published too, not only as printable bytes.
  assert.throws(
    () => SecretProvider.fromValue(new TextEncoder().encode(hex)),
    /^RangeError: The secret is an example printed/,
  );
});

Deno.test("lows 27 finding 1: every form of every secret the docs print, and of the earlier ones, is refused as published, current or previous", async () => {
  const keys = new Map<string, string>();
  for (const secret of EARLIER) keys.set(toHex(keyBytes(secret)), secret);
  for await (const path of files(ROOT)) {
    const text = await Deno.readTextFile(path);
    for (const part of docText(path, text)) {
      for (const [match] of part.matchAll(CANDIDATE)) {
        if (/^[a-z-]+$/i.test(match) && match.includes("-")) continue;
        // A printed secret: its text refused as published (or accepted,
        // which the scan above reports). Paths and words that the
        // "paste mistake" checks refuse as text are not secrets.
        if (refusedOtherwise(match)) continue;
        const bytes = keyBytes(match);
        keys.set(toHex(bytes), `${relative(ROOT, path)}: ${match}`);
      }
    }
  }
  assert.ok(keys.size >= EARLIER.length);
  const fresh = toBase64(crypto.getRandomValues(new Uint8Array(32)));
  const accepted: string[] = [];
  for (const [hex, where] of keys) {
    const bytes = Uint8Array.from(hex.match(/../g)!, (p) => parseInt(p, 16));
    for (const { label, value } of forms(bytes)) {
      if (!refusedAsPublished(() => SecretProvider.fromValue(value))) {
        accepted.push(`${where} as ${label}`);
      }
      if (!refusedAsPublished(() => SecretProvider.fromValue(fresh, [value]))) {
        accepted.push(`${where} as ${label}, previous`);
      }
    }
  }
  assert.deepEqual(
    accepted,
    [],
    "a form of a printed secret is accepted: add the digest of its bytes to lib/secrets/_published_secrets.ts",
  );
});

/** Refused for a reason other than being published (a pattern, words, …). */
function refusedOtherwise(value: string | Uint8Array): boolean {
  try {
    SecretProvider.fromValue(value);
    return false;
  } catch (error) {
    return (error instanceof RangeError || error instanceof TypeError) &&
      !error.message.includes(PUBLISHED_MESSAGE);
  }
}

Deno.test("lows 27 finding 1: random secrets are accepted in every form, current and previous", () => {
  for (let i = 0; i < 500; i++) {
    const bytes = crypto.getRandomValues(new Uint8Array(i % 5 === 0 ? 48 : 32));
    const all = forms(bytes);
    for (const { label, value } of all) {
      assert.equal(SecretProvider.fromValue(value).size, 1, label);
    }
    assert.equal(
      SecretProvider.fromValue(all[0].value, all.map((f) => f.value)).size,
      all.length + 1,
    );
  }
});

Deno.test("the synchronous SHA-256 behind the list matches WebCrypto's", async () => {
  const { sha256HexSync } = await import("../../lib/secrets/_sha256.ts");
  for (const length of [0, 1, 3, 55, 56, 63, 64, 65, 119, 120, 1000]) {
    const text = "é".repeat(length >> 1) + "a".repeat(length - (length >> 1));
    const web = new Uint8Array(
      await crypto.subtle.digest("SHA-256", new TextEncoder().encode(text)),
    );
    const hex = Array.from(web, (b) => b.toString(16).padStart(2, "0")).join(
      "",
    );
    assert.equal(sha256HexSync(text), hex, `length ${length}`);
  }
  assert.equal(
    sha256HexSync("abc"),
    "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad",
  );
});
