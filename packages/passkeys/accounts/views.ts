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

/** The login page's "Sign in with a passkey" button. */
export function passkeyLoginButton(next: string): Html {
  return html`
    <p><button type="button" id="passkey-login" data-next="${next}" hidden>Sign in with a passkey</button></p>
    <p id="passkey-status" role="status"></p>
    ${SCRIPT}
  `;
}

/**
 * The account page's passkeys: the list (rename, remove) and "add". Adding
 * and removing ask for the current password unless the account has none
 * (`passwordless`: it re-authenticates first).
 */
export function passkeysSection(
  passkeys: readonly { credentialId: string; name: string }[],
  passwordless = false,
): Html {
  const password = (id: string) => currentPasswordField(id, passwordless);
  return html`
    <h2>Passkeys</h2>
    <ul id="passkeys">${passkeys.map((p) =>
      html`<li data-id="${p.credentialId}"><span class="passkey-name">${p.name}</span>
        <form method="post" action="/account/passkeys/rename" class="inline">
          <input type="hidden" name="id" value="${p.credentialId}">
          <input name="name" value="${p.name}" maxlength="64" aria-label="Name">
          <button type="submit">Rename</button>
        </form>
        <form method="post" action="/account/passkeys/delete" class="inline">
          <input type="hidden" name="id" value="${p.credentialId}">
          ${password(`passkey-delete-password-${p.credentialId}`)}
          <button type="submit">Remove</button>
        </form></li>`
    )}</ul>
    <form id="passkey-add" hidden>
      <label for="passkey-name">Name for a new passkey</label>
      <input id="passkey-name" name="name" maxlength="64" value="Passkey">
      ${password("passkey-add-password")}
      <p><button type="submit">Add a passkey</button></p>
    </form>
    <p id="passkey-status" role="status"></p>
    ${SCRIPT}
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
