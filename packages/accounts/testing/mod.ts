/**
 * `@portcullis/accounts/testing`: the security test kit. The guarantees of
 * the accounts package's HTTP contract (answers that do not reveal which
 * addresses exist, the 15-character minimum of a password alone, single-use links, a reset that ends every session, an
 * email change that waits for the new address, a deletion that asks for
 * the password again, cross-site refusal, cookie attributes, sign-out,
 * body caps, throttling, JSON and HTML answers, the TOTP step) as checks
 * that run over real HTTP against your running app, so that an app whose
 * views, hooks or modules you changed proves it kept every one.
 *
 * The kit needs the app's base URL and a way to read the links it mails:
 * {@linkcode logMailReader} over `LogMailer`'s lines, or
 * {@linkcode mailRecorder} (a recording stand-in for Resend's API) and
 * {@linkcode recordedMailReader}. Run it with {@linkcode accountsKit} inside
 * `deno test` (one step per check), or {@linkcode runAccountsKit} from
 * Bun's or Node's test runner. A check whose module the app leaves out
 * (TOTP, email verification) is reported as not applicable, never passed.
 *
 * Run it against an app started for the test (a fresh database): it
 * registers six accounts and tries four refused registrations, within the
 * default ten registrations per client address an hour.
 *
 * @example In a generated project's `app_test.ts`
 * ```ts ignore
 * import { accountsKit, logMailReader } from "@portcullis/accounts/testing";
 *
 * Deno.test("the app keeps the guarantees", async (t) => {
 *   const lines: string[] = [];
 *   const app = makeApp({ mailer: new LogMailer((l) => lines.push(l)) });
 *   const server = Deno.serve({ hostname: "127.0.0.1", port: 0 }, app.fetch);
 *   await accountsKit({
 *     baseUrl: `http://127.0.0.1:${server.addr.port}`,
 *     mail: logMailReader(lines),
 *   }, t);
 *   await server.shutdown();
 * });
 * ```
 *
 * @module
 */
export {
  accountsKit,
  type AccountsKitOptions,
  formatKitReport,
  type KitReport,
  type KitResult,
  type KitStatus,
  type KitTestContext,
  runAccountsKit,
} from "./kit.ts";
export {
  logMailReader,
  type MailReader,
  type MailRecorder,
  mailRecorder,
  type RecordedMail,
  recordedMailReader,
} from "./mail_readers.ts";
