/**
 * A name a person recognises for the browser or client behind a
 * `User-Agent` string ("Chrome on Linux", "Safari on iPhone", "curl"), for
 * the account page's sessions and activity. The full string stays on the
 * page, one click away.
 *
 * @module
 */

/** Browsers, the first that matches wins (Edge and Opera also say Chrome). */
const BROWSERS: readonly (readonly [RegExp, string])[] = [
  [/\bEdg(?:e|A|iOS)?\//, "Edge"],
  [/\bOPR\/|\bOpera\b/, "Opera"],
  [/\bSamsungBrowser\//, "Samsung Internet"],
  [/\b(?:Firefox|FxiOS)\//, "Firefox"],
  [/\bHeadlessChrome\//, "Headless Chrome"],
  [/\b(?:Chrome|CriOS|Chromium)\//, "Chrome"],
  [/\bVersion\/[\d.]+.*\bSafari\/|\bMobile\/\w+ Safari\//, "Safari"],
];

/** Systems, the first that matches wins (Android also says Linux). */
const SYSTEMS: readonly (readonly [RegExp, string])[] = [
  [/\biPhone\b/, "iPhone"],
  [/\biPad\b/, "iPad"],
  [/\bAndroid\b/, "Android"],
  [/\bCrOS\b/, "ChromeOS"],
  [/\bWindows\b/, "Windows"],
  [/\bMac OS X\b|\bMacintosh\b/, "macOS"],
  [/\bLinux\b|\bX11\b/, "Linux"],
];

/** A client that names itself first (`curl/8.5.0`, `Deno/2.9.6`). */
const PRODUCT = /^([A-Za-z][\w.-]{0,39})\/\S/;

/**
 * Names the browser and system of a `User-Agent` string: "Chrome on Linux",
 * "Firefox on Windows", "Safari on iPhone"; a client that is not a browser
 * by its first product name ("curl", "Deno", "python-requests"); an empty
 * or missing string as "Unknown device". It only reads the string, which
 * the client chose: a name for people, never evidence.
 *
 * @example Usage
 * ```ts
 * import assert from "node:assert/strict";
 * import { deviceName } from "@portcullis/accounts/views";
 * assert.equal(
 *   deviceName(
 *     "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0.0.0 Safari/537.36",
 *   ),
 *   "Chrome on Linux",
 * );
 * assert.equal(deviceName("curl/8.5.0"), "curl");
 * assert.equal(deviceName(null), "Unknown device");
 * ```
 *
 * @param userAgent The `User-Agent` header as recorded, or `null`.
 * @returns A short name (at most about 40 characters).
 */
export function deviceName(userAgent: string | null): string {
  const ua = (userAgent ?? "").trim();
  if (ua === "") return "Unknown device";
  const browser = BROWSERS.find(([pattern]) => pattern.test(ua))?.[1];
  const system = SYSTEMS.find(([pattern]) => pattern.test(ua))?.[1];
  if (browser && system) return `${browser} on ${system}`;
  if (browser) return browser;
  const product = ua.match(PRODUCT)?.[1];
  if (product && product !== "Mozilla") return product;
  return system ? `A browser on ${system}` : "Unknown device";
}
