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
