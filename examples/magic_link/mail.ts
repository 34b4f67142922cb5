/**
 * Sending the sign-in links: through Resend's HTTP API when
 * `RESEND_API_KEY` is set, else one log line per mail starting with
 * `[mail not sent]` (development).
 *
 * @module
 */

/** One email. */
export interface MailMessage {
  /** The recipient. */
  to: string;
  /** The subject line. */
  subject: string;
  /** The HTML body. */
  view: string;
  /** The plain-text body. */
  text: string;
}

/** Anything that can send an email. A failure throws. */
export interface Mailer {
  /** Sends one email. */
  send(message: MailMessage): Promise<void>;
}

/**
 * The mailer the environment names.
 *
 * @param env `RESEND_API_KEY`, `MAIL_FROM`, `RESEND_BASE_URL`.
 * @param log Where the development mailer writes.
 * @returns Resend, or a mailer that logs the recipient and the link.
 */
export function mailerFromEnv(
  env: Record<string, string | undefined>,
  log: (line: string) => void = console.log,
): Mailer {
  const apiKey = env.RESEND_API_KEY;
  if (!apiKey) {
    return {
      send: (m) => {
        const link = m.text.match(/https?:\/\/\S+/)?.[0] ?? "(no link)";
        log(`[mail not sent] to=${m.to} link=${link}`);
        return Promise.resolve();
      },
    };
  }
  const base = (env.RESEND_BASE_URL ?? "https://api.resend.com")
    .replace(/\/+$/, "");
  const from = env.MAIL_FROM ?? "portcullis <onboarding@resend.dev>";
  return {
    send: async (m) => {
      const res = await fetch(`${base}/emails`, {
        method: "POST",
        headers: {
          authorization: `Bearer ${apiKey}`,
          "content-type": "application/json",
        },
        body: JSON.stringify({
          from,
          to: [m.to],
          subject: m.subject,
          html: m.view,
          text: m.text,
        }),
      });
      await res.body?.cancel();
      if (!res.ok) throw new Error(`Mail API answered ${res.status}`);
    },
  };
}
