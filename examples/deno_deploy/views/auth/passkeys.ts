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
    <section id="passkeys-section" class="item" aria-labelledby="passkeys-h">
      <h3 id="passkeys-h">Passkeys</h3>
      ${passkeys.length === 0
        ? html`<p class="state" id="no-passkeys">None yet.</p>`
        : ""}
      <ul id="passkeys" class="list">${passkeys.map((p) =>
        html`
          <li data-id="${p.credentialId}">
            <span class="passkey-name">${p.name}</span>
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
