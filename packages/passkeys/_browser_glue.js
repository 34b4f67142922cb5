// The browser side of the passkey pages, bundled with @simplewebauthn/browser
// into browser_script.ts by _build_browser_script.ts. It drives three
// elements when present: #passkey-login (a button on /login),
// #passkey-reauth (a "confirm it's you" button on /account) and
// #passkey-add (a form on /account, whose `password` field, when it has
// one, goes with the options request), and writes to #passkey-status.
import {
  browserSupportsWebAuthn,
  startAuthentication,
  startRegistration,
} from "@simplewebauthn/browser";

async function post(url, body) {
  const res = await fetch(url, {
    method: "POST",
    credentials: "same-origin",
    headers: { "content-type": "application/json", accept: "application/json" },
    body: JSON.stringify(body),
  });
  let data = {};
  try {
    data = await res.json();
  } catch {
    // no body
  }
  return [res.status, data];
}

function say(text) {
  const status = document.getElementById("passkey-status");
  if (status) status.textContent = text;
}

// A sign-in (/passkeys/login) or a re-authentication (/passkeys/reauth):
// the same ceremony, then the page the server names.
function ceremony(button, path, failed) {
  if (!button || !browserSupportsWebAuthn()) return;
  button.hidden = false;
  button.addEventListener("click", async () => {
    try {
      const [, optionsJSON] = await post(`${path}/options`, {});
      const response = await startAuthentication({ optionsJSON });
      const [code, body] = await post(path, {
        response,
        next: button.dataset.next || "/",
      });
      if (code === 200) {
        location.assign(body.next);
        return;
      }
      say(body.message || failed);
    } catch {
      say(`${failed}: cancelled or refused`);
    }
  });
}

ceremony(
  document.getElementById("passkey-login"),
  "/passkeys/login",
  "Sign-in with a passkey failed",
);
ceremony(
  document.getElementById("passkey-reauth"),
  "/passkeys/reauth",
  "Confirmation with a passkey failed",
);

const add = document.getElementById("passkey-add");
if (add && browserSupportsWebAuthn()) {
  add.hidden = false;
  add.addEventListener("submit", async (event) => {
    event.preventDefault();
    try {
      const fields = new FormData(add);
      const password = fields.get("password");
      const [allowed, optionsJSON] = await post(
        "/passkeys/register/options",
        password === null ? {} : { password },
      );
      if (allowed !== 200) {
        say(optionsJSON.message || "The passkey could not be added");
        return;
      }
      const response = await startRegistration({ optionsJSON });
      const name = fields.get("name") || "Passkey";
      const [code, body] = await post("/passkeys/register", { response, name });
      if (code === 201) {
        location.reload();
        return;
      }
      say(body.message || "The passkey could not be added");
    } catch {
      say("Adding a passkey was cancelled or failed");
    }
  });
}
