// The browser side of the passkey pages, bundled with @simplewebauthn/browser
// into browser_script.ts by _build_browser_script.ts. It drives two
// elements when present: #passkey-login (a button on /login) and
// #passkey-add (a form on /account), and writes to #passkey-status.
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

const login = document.getElementById("passkey-login");
if (login && browserSupportsWebAuthn()) {
  login.hidden = false;
  login.addEventListener("click", async () => {
    try {
      const [, optionsJSON] = await post("/passkeys/login/options", {});
      const response = await startAuthentication({ optionsJSON });
      const [code, body] = await post("/passkeys/login", {
        response,
        next: login.dataset.next || "/",
      });
      if (code === 200) {
        location.assign(body.next);
        return;
      }
      say(body.message || "Sign-in with a passkey failed");
    } catch {
      say("Sign-in with a passkey was cancelled or failed");
    }
  });
}

const add = document.getElementById("passkey-add");
if (add && browserSupportsWebAuthn()) {
  add.hidden = false;
  add.addEventListener("submit", async (event) => {
    event.preventDefault();
    try {
      const [, optionsJSON] = await post("/passkeys/register/options", {});
      const response = await startRegistration({ optionsJSON });
      const name = new FormData(add).get("name") || "Passkey";
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
