// The browser side of the passkey pages, built from @portcullis/client into
// browser_script.ts by _build_browser_script.ts. It drives the elements a
// page has, each when present:
// - #passkey-login (a button on /login) and the autofill of an input whose
//   autocomplete ends in "webauthn" (/login's email field);
// - #passkey-reauth (a "confirm it's you" button on /account);
// - #passkey-add (a form on /account, whose `password` field, when it has
//   one, goes with the options request);
// - #passkey-signup (/passkeys/signup) and #passkey-recover-add (the
//   recovery session's page);
// - #passkeys-section's data-* (the Signals on /account) and
//   #passkey-upgrade (the automatic upgrade after a password sign-in);
// and writes to #passkey-status.
import {
  PortcullisClient,
  signalAllAcceptedCredentials,
  signalCurrentUserDetails,
  supportsPasskeys,
} from "@portcullis/client";

const client = new PortcullisClient();
const supported = supportsPasskeys();

function say(text) {
  const status = document.getElementById("passkey-status");
  if (status) status.textContent = text;
}

function go(result, fallback) {
  if (result.ok) {
    location.assign(result.data?.next || fallback);
    return true;
  }
  return false;
}

// A sign-in (/passkeys/login) or a re-authentication (/passkeys/reauth).
function button(el, run, failed) {
  if (!el || !supported) return;
  el.hidden = false;
  el.addEventListener("click", async () => {
    const result = await run({ next: el.dataset.next || "/" });
    if (!go(result, "/")) say(result.error.message || failed);
  });
}

const login = document.getElementById("passkey-login");
button(
  login,
  (input) => client.signInWithPasskey(input),
  "Sign-in with a passkey failed",
);
button(
  document.getElementById("passkey-reauth"),
  (input) => client.reauthWithPasskey(input),
  "Confirmation with a passkey failed",
);

// Autofill: the email field offers the passkeys; picking one signs in.
const autofill = document.querySelector("input[autocomplete$='webauthn']");
if (autofill && supported) {
  const next = login?.dataset.next || "/";
  (async () => {
    for (let tries = 0; tries < 3; tries++) {
      const result = await client.signInWithPasskey({ next, autofill: true });
      if (go(result, "/")) return;
      // The button's ceremony aborted this one, or the browser has none.
      if (result.error.error === "unsupported") return;
      if (result.error.reason === "AbortError") return;
      if (result.status !== 0) say(result.error.message);
    }
  })();
}

const add = document.getElementById("passkey-add");
if (add && supported) {
  add.hidden = false;
  add.addEventListener("submit", async (event) => {
    event.preventDefault();
    const fields = new FormData(add);
    const password = fields.get("password");
    const result = await client.addPasskey({
      name: fields.get("name") || "Passkey",
      password: password === null ? undefined : password,
    });
    if (result.ok) {
      location.reload();
      return;
    }
    say(result.error.message || "The passkey could not be added");
  });
}

const signup = document.getElementById("passkey-signup");
if (signup) {
  const submit = signup.querySelector("button[type=submit]");
  if (!supported) {
    say("This browser cannot use passkeys: register with a password instead.");
  } else {
    if (submit) submit.disabled = false;
    signup.addEventListener("submit", async (event) => {
      event.preventDefault();
      const fields = new FormData(signup);
      const result = await client.signUpWithPasskey({
        email: fields.get("email") || "",
        next: signup.dataset.next || "/",
      });
      if (!go(result, "/")) {
        say(result.error.message || "The account could not be created");
      }
    });
  }
}

const recover = document.getElementById("passkey-recover-add");
if (recover && supported) {
  recover.hidden = false;
  recover.addEventListener("submit", async (event) => {
    event.preventDefault();
    const fields = new FormData(recover);
    const result = await client.recoverWithPasskey({
      name: fields.get("name") || "Passkey",
    });
    if (!go(result, "/account")) {
      say(result.error.message || "The passkey could not be added");
    }
  });
}

// The Signals: what the server holds for this user, on each visit of the
// account page (so after a passkey is removed, and after an email change).
const section = document.getElementById("passkeys-section");
if (section && section.dataset.rpId && section.dataset.userId) {
  const user = { rpId: section.dataset.rpId, userId: section.dataset.userId };
  const ids = (section.dataset.credentialIds || "").split(" ").filter(Boolean);
  signalAllAcceptedCredentials(user, ids);
  if (section.dataset.userName) {
    signalCurrentUserDetails(user, section.dataset.userName);
  }
}

// The automatic upgrade: right after a password sign-in, a passkey made
// without a dialog where the browser supports conditional create.
if (document.getElementById("passkey-upgrade") && supported) {
  client.upgradeToPasskey().then((result) => {
    document.documentElement.dataset.passkeyUpgrade = result.ok
      ? "created"
      : result.error.error;
  });
}
