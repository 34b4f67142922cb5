// Copied from packages/passkeys/accounts/views.ts (portcullis 0.3.0) by the scaffold: this file is yours to change.
/**
 * The passkey parts of the login and account pages. The buttons start
 * hidden; the served module (`/assets/passkeys.js`) shows them when the
 * browser supports WebAuthn.
 *
 * @module
 */
import {
  currentPasswordField,
  type Html,
  html,
} from "@portcullis/accounts/views";

const SCRIPT = html`<script type="module" src="/assets/passkeys.js"></script>`;

/**
 * The login page's "Sign in with a passkey" button, and the links to sign
 * up with a passkey and to recover an account whose passkey is lost.
 */
export function passkeyLoginButton(next: string): Html {
  return html`
    <p><button type="button" id="passkey-login" data-next="${next}" hidden>Sign in with a passkey</button></p>
    <p id="passkey-status" role="status"></p>
    <p><a href="/passkeys/signup">Sign up with a passkey</a> · <a href="/passkeys/recover">Lost your passkey?</a></p>
    ${SCRIPT}
  `;
}

/**
 * The account page's passkeys: the list (rename, remove) and "add". Adding
 * and removing ask for the current password unless the account has none
 * (`passwordless`: it re-authenticates first). Each passkey says whether
 * it is synced (backed up) or kept on one device only; a user whose only
 * passkey is on one device is told to add another (and to set or keep a
 * password). With `signals`, the
 * section carries what the served script tells the browser on each visit
 * (WebAuthn Signals: the accepted credential ids, the user's current
 * name).
 */
export function passkeysSection(
  passkeys: readonly {
    credentialId: string;
    name: string;
    backedUp?: boolean;
  }[],
  passwordless = false,
  signals?: PasskeySignals,
): Html {
  const password = (id: string) => currentPasswordField(id, passwordless);
  const data = signals
    ? html`
      data-rp-id="${signals.rpId}" data-user-id="${signals
        .userId}" data-user-name="${signals
        .name}" data-credential-ids="${passkeys.map((p) => p.credentialId).join(
          " ",
        )}"
    `
    : "";
  return html`
    <section id="passkeys-section" class="item" aria-labelledby="passkeys-h"
      ${data}>
      <h3 id="passkeys-h">Passkeys</h3>
      ${passkeys.length === 0
        ? html`<p class="state" id="no-passkeys">None yet.</p>`
        : ""}${passkeys.length === 1 && !passkeys[0].backedUp
        ? html`
          <p class="state"
            id="passkey-nudge">Your only passkey is kept on one device, not synced: if that device is lost, so is the passkey. ${passwordless
              ? "Add a passkey on another device, or set a password."
              : "Add a passkey on another device, and keep your password."}</p>
        `
        : ""}
      <ul id="passkeys" class="list">${passkeys.map((p) =>
        html`
          <li data-id="${p.credentialId}">
            <span class="passkey-name">${p.name}</span>
            <span class="passkey-backup">${p.backedUp
              ? "Synced"
              : "This device only"}</span>
            <details class="action">
              <summary>Rename or remove</summary>
              <form method="post" action="/account/passkeys/rename">
                <input type="hidden" name="id" value="${p.credentialId}">
                <label for="passkey-rename-${p.credentialId}">New name</label>
                <input id="passkey-rename-${p.credentialId}" name="name"
                  type="text" value="${p.name}" maxlength="64" required>
                <p><button type="submit" class="secondary">Rename</button></p>
              </form>
              <form method="post" action="/account/passkeys/delete">
                        <input type="hidden" name="id" value="${p
                          .credentialId}">
                        ${password(`passkey-delete-password-${p.credentialId}`)}
                        <p><button type="submit" class="secondary">Remove this passkey</button></p>
                      </form>
            </details>
          </li>
        `
      )}</ul>
      <form id="passkey-add" hidden>
        <label for="passkey-name">Name for a new passkey</label>
        <input id="passkey-name" name="name" type="text" maxlength="64"
          value="Passkey">
        ${password("passkey-add-password")}
        <p><button type="submit">Add a passkey</button></p>
      </form>
      <p id="passkey-status" role="status"></p>
      ${SCRIPT}
    </section>
  `;
}

/**
 * The "Confirm it's you" way of an account with a passkey (an item of the
 * account page's list; `/assets/passkeys.js`, loaded by the passkeys
 * section, shows it).
 */
export function passkeyReauthButton(): Html {
  return html`<li><button type="button" id="passkey-reauth" data-next="/account" hidden>Confirm with a passkey</button></li>`;
}

/** Who the account page's Signals are about. */
export interface PasskeySignals {
  /** The relying party id. */
  rpId: string;
  /** The user handle, base64url. */
  userId: string;
  /** The account's name (its address). */
  name: string;
}

/** The passkeys module's pieces of the shared pages. */
export interface PasskeyViews {
  /** The "Sign in with a passkey" button on `/login`. */
  loginButton: typeof passkeyLoginButton;
  /** The section of `/account`: the passkeys, their names, the forms. */
  section: typeof passkeysSection;
  /** The passkey item of the "Confirm it's you" list. */
  reauthButton: typeof passkeyReauthButton;
}

/** The passkeys module's default views. */
export const defaultPasskeyViews: PasskeyViews = {
  loginButton: passkeyLoginButton,
  section: passkeysSection,
  reauthButton: passkeyReauthButton,
};
