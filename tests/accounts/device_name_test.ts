/**
 * `deviceName()`, the account page's name for a User-Agent string (issue
 * 31: the page repeated the raw string on every session and activity line).
 */
import assert from "node:assert/strict";
import fc from "fast-check";
import { deviceName } from "../../packages/accounts/views/mod.ts";

const NAMES: readonly [string | null, string][] = [
  [
    "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0.0.0 Safari/537.36",
    "Chrome on Linux",
  ],
  [
    "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) HeadlessChrome/156.0.0.0 Safari/537.36",
    "Headless Chrome on Linux",
  ],
  [
    "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0.0.0 Safari/537.36 Edg/126.0.2592.87",
    "Edge on Windows",
  ],
  [
    "Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.5 Safari/605.1.15",
    "Safari on macOS",
  ],
  [
    "Mozilla/5.0 (iPhone; CPU iPhone OS 17_5 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.5 Mobile/15E148 Safari/604.1",
    "Safari on iPhone",
  ],
  [
    "Mozilla/5.0 (iPhone; CPU iPhone OS 17_5 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) CriOS/126.0.6478.54 Mobile/15E148 Safari/604.1",
    "Chrome on iPhone",
  ],
  [
    "Mozilla/5.0 (iPad; CPU OS 17_5 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) FxiOS/127.0 Mobile/15E148 Safari/605.1.15",
    "Firefox on iPad",
  ],
  [
    "Mozilla/5.0 (Windows NT 10.0; Win64; x64; rv:127.0) Gecko/20100101 Firefox/127.0",
    "Firefox on Windows",
  ],
  [
    "Mozilla/5.0 (X11; Ubuntu; Linux x86_64; rv:127.0) Gecko/20100101 Firefox/127.0",
    "Firefox on Linux",
  ],
  [
    "Mozilla/5.0 (Linux; Android 14; Pixel 8) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0.6478.71 Mobile Safari/537.36",
    "Chrome on Android",
  ],
  [
    "Mozilla/5.0 (Linux; Android 14; SM-S921B) AppleWebKit/537.36 (KHTML, like Gecko) SamsungBrowser/25.0 Chrome/121.0.0.0 Mobile Safari/537.36",
    "Samsung Internet on Android",
  ],
  [
    "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0.0.0 Safari/537.36 OPR/111.0.0.0",
    "Opera on Windows",
  ],
  [
    "Mozilla/5.0 (X11; CrOS x86_64 14541.0.0) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0.0.0 Safari/537.36",
    "Chrome on ChromeOS",
  ],
  ["curl/8.5.0", "curl"],
  ["Deno/2.9.6", "Deno"],
  ["python-requests/2.32.3", "python-requests"],
  ["Mozilla/5.0 (X11; Linux x86_64)", "A browser on Linux"],
  ["Mozilla/5.0", "Unknown device"],
  ["something odd", "Unknown device"],
  ["", "Unknown device"],
  [null, "Unknown device"],
];

Deno.test("deviceName() names the browser and system a person recognises (issue 31)", () => {
  for (const [ua, name] of NAMES) {
    assert.equal(deviceName(ua), name, String(ua));
  }
});

Deno.test("deviceName() answers a short, non-empty name for any string, and never throws", () => {
  fc.assert(
    fc.property(fc.option(fc.string({ maxLength: 2000 })), (ua) => {
      const name = deviceName(ua);
      assert.ok(name.length > 0 && name.length <= 48, name);
    }),
    { numRuns: 2000 },
  );
  // A client that names itself with a very long product name is cut.
  assert.equal(deviceName(`${"x".repeat(300)}/1.0`), "Unknown device");
});
