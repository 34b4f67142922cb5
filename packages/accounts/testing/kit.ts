/**
 * The security test kit: the HTTP contract's guarantees as checks that run
 * against an app over real HTTP, inside the app's own `deno test`
 * ({@linkcode accountsKit}) or from any test runner
 * ({@linkcode runAccountsKit}).
 *
 * @module
 */
import { KitClient, KitFailure } from "./_client.ts";
import { CHECKS, type KitContext, type KitModule } from "./_checks.ts";
import type { MailReader } from "./mail_readers.ts";

/** Options of {@linkcode runAccountsKit} and {@linkcode accountsKit}. */
export interface AccountsKitOptions {
  /**
   * Where the app under test listens, such as `http://127.0.0.1:8000`
   * (a path prefix is kept: `https://example.com/auth`).
   */
  baseUrl: string;
  /** Reads the links the app mails: `logMailReader`, `recordedMailReader`, or your own. */
  mail: MailReader;
  /**
   * Whether the app lists the TOTP module. Default: detected from the app's
   * answer to an anonymous `POST /account/totp` (404 when the module is
   * off). `true` makes a missing module a failure; `false` reports the
   * TOTP check as not applicable.
   */
  totp?: boolean;
  /**
   * Whether the app lists the verification module. Default: detected from
   * `GET /verify` (404 when off), as for `totp`.
   */
  verification?: boolean;
  /**
   * The password of every account the kit registers; default a random one
   * of 32 characters. Give one when the app asks more than its default
   * password rule.
   */
  password?: string;
  /** The domain of the addresses the kit registers; default `example.com`. */
  domain?: string;
  /** How long to wait for a mail, in milliseconds; default 5000. */
  mailTimeoutMs?: number;
  /** The body cap the app enforces, in bytes; default 16384 (the package's). */
  bodyCapBytes?: number;
  /**
   * The fewest characters the app asks of a password that is an account's
   * only factor (its `minPasswordLength`); default 15, NIST SP 800-63B-4's.
   */
  minPasswordLength?: number;
  /** The fetch to use; default the global one. */
  fetch?: typeof fetch;
}

/** How one check ended. */
export type KitStatus = "passed" | "failed" | "not_applicable";

/** One check's result. */
export interface KitResult {
  /** What the check proves. */
  name: string;
  /** How it ended. */
  status: KitStatus;
  /** Why it failed, or why it does not apply; absent when it passed. */
  message?: string;
  /** How long it took, in milliseconds. */
  ms: number;
}

/** What a run of the kit found. */
export interface KitReport {
  /** Every check, in the order run. */
  results: KitResult[];
  /** How many passed. */
  passed: number;
  /** How many failed. */
  failed: number;
  /** How many did not apply (a module the app leaves out). */
  notApplicable: number;
  /** How long the run took, in milliseconds. */
  ms: number;
}

/**
 * A test context with steps, such as Deno's `Deno.TestContext`: the kit
 * needs only its `step`. Nothing of Deno's test API is imported.
 */
export interface KitTestContext {
  /**
   * Runs one step and answers whether it passed.
   *
   * @param definition The step's name, its function, and whether it is
   * ignored (a check that does not apply).
   */
  step(definition: {
    name: string;
    fn: () => Promise<void> | void;
    ignore?: boolean;
  }): Promise<boolean>;
}

interface Prepared {
  ctx: KitContext;
  plan: { name: string; run: () => Promise<void>; notApplicable?: string }[];
}

function randomPassword(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(24));
  return btoa(String.fromCharCode(...bytes)).replace(/[+/=]/g, "x");
}

async function detect(
  client: KitClient,
  given: boolean | undefined,
  method: string,
  path: string,
  name: string,
): Promise<{ on: boolean; why: string }> {
  if (given !== undefined) {
    return { on: given, why: `${name} turned off in the kit's options` };
  }
  const r = await client.call(method, path, {
    headers: { accept: "application/json" },
  });
  if (r.status === 404) {
    return { on: false, why: `${name} is off: ${method} ${path} answers 404` };
  }
  return { on: true, why: "" };
}

async function prepare(options: AccountsKitOptions): Promise<Prepared> {
  if (!/^https?:\/\//.test(options.baseUrl)) {
    throw new TypeError(
      `accountsKit needs an http(s) baseUrl: received ${
        JSON.stringify(options.baseUrl)
      }`,
    );
  }
  if (typeof options.mail !== "function") {
    throw new TypeError("accountsKit needs a mail reader (options.mail)");
  }
  const client = new KitClient(
    options.baseUrl,
    options.fetch ?? ((input, init) => fetch(input, init)),
  );
  const totp = await detect(
    client,
    options.totp,
    "POST",
    "/account/totp",
    "TOTP",
  );
  const verification = await detect(
    client,
    options.verification,
    "GET",
    "/verify?token=kit",
    "Email verification",
  );
  const run = crypto.randomUUID().slice(0, 8);
  const domain = options.domain ?? "example.com";
  const ctx: KitContext = {
    client,
    mail: options.mail,
    password: options.password ?? randomPassword(),
    email: (who) => `kit-${who}-${run}@${domain}`,
    mailTimeoutMs: options.mailTimeoutMs ?? 5000,
    bodyCapBytes: options.bodyCapBytes ?? 16 * 1024,
    minPasswordLength: options.minPasswordLength ?? 15,
    https: options.baseUrl.startsWith("https:"),
    modules: { totp: totp.on, verification: verification.on },
    accounts: new Map(),
  };
  const why: Record<KitModule, string> = {
    totp: totp.why,
    verification: verification.why,
  };
  const plan = CHECKS.map((check) => ({
    name: check.name,
    run: () => check.run(ctx),
    notApplicable: check.needs !== undefined && !ctx.modules[check.needs]
      ? why[check.needs]
      : undefined,
  }));
  return { ctx, plan };
}

/**
 * Runs every check against a running app and answers what it found; it
 * never throws for a broken guarantee (that is a `failed` result). For
 * Bun's, Node's or any other test runner: assert that `failed` is 0.
 * A check that needs a module the app leaves out is `not_applicable`,
 * never passed.
 *
 * @param options The app's base URL, the mail reader, and what to expect.
 * @returns The report.
 * @throws {TypeError} When the base URL or the mail reader is missing.
 *
 * @example From `bun test` or `node --test`
 * ```ts ignore
 * import { test } from "node:test";
 * import assert from "node:assert/strict";
 * import { formatKitReport, logMailReader, runAccountsKit } from "@portcullis/accounts/testing";
 *
 * test("the app keeps the guarantees", async () => {
 *   const report = await runAccountsKit({ baseUrl: "http://127.0.0.1:8000", mail: logMailReader(lines) });
 *   assert.equal(report.failed, 0, formatKitReport(report));
 * });
 * ```
 */
export async function runAccountsKit(
  options: AccountsKitOptions,
): Promise<KitReport> {
  const t0 = performance.now();
  const { plan } = await prepare(options);
  const results: KitResult[] = [];
  for (const item of plan) {
    const started = performance.now();
    if (item.notApplicable !== undefined) {
      results.push({
        name: item.name,
        status: "not_applicable",
        message: item.notApplicable,
        ms: 0,
      });
      continue;
    }
    try {
      await item.run();
      results.push({
        name: item.name,
        status: "passed",
        ms: Math.round(performance.now() - started),
      });
    } catch (error) {
      results.push({
        name: item.name,
        status: "failed",
        message: describe(error),
        ms: Math.round(performance.now() - started),
      });
    }
  }
  const count = (status: KitStatus) =>
    results.filter((r) => r.status === status).length;
  return {
    results,
    passed: count("passed"),
    failed: count("failed"),
    notApplicable: count("not_applicable"),
    ms: Math.round(performance.now() - t0),
  };
}

/**
 * Registers every check as a step of a test, for the app's own
 * `deno test`: a failed check fails its step (and so the test), and a check
 * that needs a module the app leaves out is an ignored step whose name says
 * why. Works with any context that has Deno's `step({ name, fn, ignore })`.
 *
 * @param options The app's base URL, the mail reader, and what to expect.
 * @param t The test's context.
 * @returns The report, once every step ran.
 * @throws {TypeError} When the base URL or the mail reader is missing.
 *
 * @example In the app's own tests
 * ```ts ignore
 * import { accountsKit, logMailReader } from "@portcullis/accounts/testing";
 *
 * Deno.test("the app keeps the guarantees", async (t) => {
 *   // start the app on 127.0.0.1 with a LogMailer writing into `lines`
 *   await accountsKit({ baseUrl, mail: logMailReader(lines) }, t);
 * });
 * ```
 */
export async function accountsKit(
  options: AccountsKitOptions,
  t: KitTestContext,
): Promise<KitReport> {
  const t0 = performance.now();
  const { plan } = await prepare(options);
  const results: KitResult[] = [];
  for (const item of plan) {
    if (item.notApplicable !== undefined) {
      await t.step({
        name: `${item.name} — not applicable: ${item.notApplicable}`,
        ignore: true,
        fn: () => {},
      });
      results.push({
        name: item.name,
        status: "not_applicable",
        message: item.notApplicable,
        ms: 0,
      });
      continue;
    }
    const started = performance.now();
    let message: string | undefined;
    const ok = await t.step({
      name: item.name,
      fn: async () => {
        try {
          await item.run();
        } catch (error) {
          message = describe(error);
          throw error;
        }
      },
    });
    results.push({
      name: item.name,
      status: ok ? "passed" : "failed",
      message: ok ? undefined : message,
      ms: Math.round(performance.now() - started),
    });
  }
  const count = (status: KitStatus) =>
    results.filter((r) => r.status === status).length;
  return {
    results,
    passed: count("passed"),
    failed: count("failed"),
    notApplicable: count("not_applicable"),
    ms: Math.round(performance.now() - t0),
  };
}

/**
 * Writes a report as lines: `ok - <check>`, `FAIL - <check>: <why>`,
 * `n/a - <check>: <why>`, then the tally.
 *
 * @param report The report.
 * @returns The text.
 *
 * @example Usage
 * ```ts
 * import { formatKitReport } from "@portcullis/accounts/testing";
 *
 * const text = formatKitReport({
 *   results: [{ name: "sign-out revokes", status: "passed", ms: 12 }],
 *   passed: 1, failed: 0, notApplicable: 0, ms: 12,
 * });
 * if (!text.startsWith("ok - sign-out revokes")) throw new Error(text);
 * ```
 */
export function formatKitReport(report: KitReport): string {
  const lines = report.results.map((r) =>
    r.status === "passed"
      ? `ok - ${r.name} (${r.ms} ms)`
      : r.status === "failed"
      ? `FAIL - ${r.name}: ${r.message}`
      : `n/a - ${r.name}: ${r.message}`
  );
  lines.push(
    `security kit: ${report.passed} passed, ${report.failed} failed, ${report.notApplicable} not applicable in ${report.ms} ms`,
  );
  return lines.join("\n");
}

function describe(error: unknown): string {
  if (error instanceof KitFailure) return error.message;
  if (error instanceof Error) return `${error.name}: ${error.message}`;
  return String(error);
}
