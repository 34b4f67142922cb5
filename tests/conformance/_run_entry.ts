/**
 * One conformance run of one entry: the mail sink and the sign-in methods'
 * services, the entry started by {@linkcode startEntry} on
 * `http://localhost:<port>`, the contract, the security test kit of
 * `@portcullis/accounts/testing`, the runner's own checks, and the
 * closing line. An entry that cannot start here is skipped (a failure
 * under CI).
 *
 * @module
 */
import type { ContractResult } from "./contract.ts";
import {
  formatKitReport,
  recordedMailReader,
  runAccountsKit,
} from "@portcullis/accounts/testing";
import type { MailSink } from "./mail_sink.ts";
import {
  type EntryName,
  EntryUnavailable,
  startEntry,
} from "./_start_entry.ts";
import {
  finish,
  freePort,
  randomSecret,
  runAndReport,
  scratchDir,
  signInAbout,
  skipOrFail,
  startMailSink,
  startSignInServices,
} from "./_runner.ts";

/**
 * Runs the contract against one entry, then exits with its tally.
 *
 * @param name The entry.
 * @param after Checks of the runner's own after the contract, adding to
 * the tally.
 */
export async function runEntry(
  name: EntryName,
  after?: (origin: string, result: ContractResult) => Promise<void>,
): Promise<never> {
  const dir = await scratchDir(name.replace("_", "-"));
  const mail = startMailSink();
  const port = freePort();
  // localhost, not 127.0.0.1: WebAuthn refuses an IP address as the RP id.
  const origin = `http://localhost:${port}`;
  const secret = randomSecret();
  const signIn = await startSignInServices(origin);
  let entry;
  try {
    entry = await startEntry(name, {
      port,
      dir,
      settings: {
        APP_ORIGIN: origin,
        AUTH_SECRET: secret,
        RESEND_API_KEY: mail.apiKey,
        RESEND_BASE_URL: mail.url,
        ...signIn.env,
      },
    });
  } catch (error) {
    await mail.close();
    await signIn.close();
    if (!(error instanceof EntryUnavailable)) throw error;
    skipOrFail(error.message, error.output);
  }
  const result = await runAndReport(
    {
      label: entry.label,
      about: [...entry.about, signInAbout(signIn)],
      expectRoute: entry.expectRoute,
    },
    origin,
    mail,
    { secret, op: signIn.op, opError: signIn.opError },
  );
  await runKit(entry.label, origin, mail, result);
  await after?.(origin, result);
  const closing = await entry.stop();
  await mail.close();
  await signIn.close(); // the OpenID Provider's process
  for (const line of closing) console.log(line);
  await Deno.remove(dir, { recursive: true }).catch(() => {});
  finish(result, entry.output());
}

/**
 * Runs the security test kit of `@portcullis/accounts/testing` against the
 * entry, as a user runs it against their app: its checks join the tally,
 * and its time is printed per runtime.
 *
 * @param label The runtime.
 * @param origin Where the entry listens.
 * @param mail The mail sink the entry sends to.
 * @param result The tally to add to.
 */
async function runKit(
  label: string,
  origin: string,
  mail: MailSink,
  result: ContractResult,
): Promise<void> {
  const report = await runAccountsKit({
    baseUrl: origin,
    mail: recordedMailReader(mail.mails),
    totp: true, // the entries list the TOTP module
    verification: true,
  });
  for (const line of formatKitReport(report).split("\n")) {
    console.log(
      line.startsWith("security kit:") ? `# ${label}: ${line}` : line,
    );
  }
  for (const r of report.results) {
    if (r.status === "passed") result.passed++;
    else {
      result.failed++;
      result.failures.push(`security kit: ${r.name}`);
    }
  }
}
