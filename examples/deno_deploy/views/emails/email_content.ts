// Copied from packages/accounts/views/emails/email_content.ts (portcullis 0.3.0) by the scaffold: this file is yours to change.
/**
 * What every email view renders.
 *
 * @module
 */

/** An email ready for `Mailer.send`, minus the recipient. */
export interface EmailContent {
  /** The subject line. */
  subject: string;
  /** The HTML body. */
  view: string;
  /** The plain-text body. */
  text: string;
}
