// Headless Chromium for the browser tests and the conformance passkey rows:
// Debian's build (never a downloaded one), started with the flags this
// closed network needs, and the CDP virtual authenticator for passkeys.
import type { CDPSession, Page } from "playwright-core";
import { missing } from "./services.ts";

/** Debian's Chromium. */
export const CHROMIUM = "/usr/bin/chromium";

/** Flags for a headless run without background network traffic. */
export const CHROMIUM_ARGS: readonly string[] = [
  "--no-sandbox",
  "--disable-gpu",
  "--disable-quic",
  "--no-first-run",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync",
];

/** Whether Chromium is installed; reports it missing otherwise. */
export async function haveChromium(): Promise<boolean> {
  try {
    await Deno.stat(CHROMIUM);
    return true;
  } catch {
    return missing(
      `Chromium is not installed at ${CHROMIUM} (apt-get install chromium)`,
    );
  }
}

/**
 * Makes the page's browser one without passkey autofill
 * (`isConditionalMediationAvailable()` answers `false`). The virtual
 * authenticator answers a conditional (autofill) request at once, as if
 * the user picked the passkey from the list: a test of the "Sign in with
 * a passkey" button turns autofill off, or the login page signs in before
 * the click.
 */
export const NO_AUTOFILL: string =
  `if (window.PublicKeyCredential) PublicKeyCredential.isConditionalMediationAvailable = () => Promise.resolve(false);`;

/**
 * Adds a CTAP2 platform authenticator with resident keys and user
 * verification to a page (CDP `WebAuthn.addVirtualAuthenticator`). Unless
 * `autofill` is set, the page's context also gets {@linkcode NO_AUTOFILL}.
 */
export async function addVirtualAuthenticator(
  page: Page,
  options: { autofill?: boolean } = {},
): Promise<{ cdp: CDPSession; id: string }> {
  if (!options.autofill) await page.context().addInitScript(NO_AUTOFILL);
  const cdp = await page.context().newCDPSession(page);
  await cdp.send("WebAuthn.enable");
  const { authenticatorId } = await cdp.send(
    "WebAuthn.addVirtualAuthenticator",
    {
      options: {
        protocol: "ctap2",
        transport: "internal",
        hasResidentKey: true,
        hasUserVerification: true,
        isUserVerified: true,
        automaticPresenceSimulation: true,
      },
    },
  );
  return { cdp, id: authenticatorId };
}
