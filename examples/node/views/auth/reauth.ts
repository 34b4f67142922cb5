// Copied from packages/accounts/views/auth/reauth.ts (portcullis 0.3.0) by the scaffold: this file is yours to change.
/**
 * The account page's "Confirm it's you" section, for an account without a
 * password: a fresh sign-in with a linked provider or a passkey stands in
 * for the password before a sensitive change.
 *
 * @module
 */
import { type Html, html } from "@portcullis/accounts/views";

/** What {@linkcode reauthSection} needs. */
export interface ReauthInput {
  /** Whether this session re-authenticated in the last five minutes. */
  fresh: boolean;
  /**
   * The ways to confirm, one `<li>` each, from the modules (a linked
   * provider, a passkey).
   */
  ways: readonly Html[];
}

/**
 * Renders the section. The passkey button starts hidden; the served module
 * (`/assets/passkeys.js`, loaded by the passkeys section) shows it.
 *
 * @param input The state and the ways to confirm.
 * @returns The markup.
 */
export function reauthSection(input: ReauthInput): Html {
  const ways = input.ways;
  return html`
    <section id="reauth" class="item" aria-labelledby="reauth-h">
      <h3 id="reauth-h">Confirm it's you</h3>
      ${input.fresh
        ? html`<p id="reauth-fresh">Confirmed. For a few minutes, the changes
          below go through without a password.</p>`
        : html`<p id="reauth-needed">This account has no password. Before you
          change your email address, delete the account, turn two-factor
          authentication on or off, add or remove a passkey or link a provider,
          sign in again:</p>`}
      ${ways.length > 0
        ? html`<ul>${ways}</ul>`
        : html`<p>No provider or passkey can confirm it: set a password first.</p>`}
    </section>
  `;
}
