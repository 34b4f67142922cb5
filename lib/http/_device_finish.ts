// After the handler, with device-bound sessions on: a sign-in or sign-out
// clears the bound cookie the request carried, as does a bound cookie that
// no longer holds; the answer to a fresh sign-in that sets the ordinary
// session cookie (a browser's) carries the registration offer, and no
// other answer does: the offer's challenge is the one-time ticket that
// binding needs, so a copied cookie (which never signs in afresh) cannot
// be bound to a thief's key, and an API client that takes its token from
// a JSON body is never handed a challenge it cannot use.
import type { RequestState } from "./_request_state.ts";
import type { DeviceBoundSessions } from "./device_bound_sessions.ts";

export async function finishDevice(
  device: DeviceBoundSessions,
  response: Response,
  state: RequestState,
): Promise<Response> {
  const session = state.session;
  const offer = state.freshSignIn === true && session.kind === "signedIn" &&
    session.via === "cookie" && session.identity.binding === undefined &&
    setsSessionCookie(response, state.context.cookie!.name);
  // A bound cookie that no longer holds is cleared too: the browser then
  // renews its session (moved on to another jti by a sign-in elsewhere)
  // at once, instead of looking signed out until the cookie expires.
  const clear = state.boundCookie === true &&
    (state.changed || session.kind === "invalid");
  if (!offer && !clear) return response;
  const out = new Response(response.body, response);
  if (clear) out.headers.append("set-cookie", device.cookie.clear());
  if (offer) {
    try {
      out.headers.set(
        "secure-session-registration",
        await device.registrationHeader(session.identity),
      );
    } catch {
      // Without the offer the session works unbound, as without the option.
    }
  }
  return out;
}

/** Whether an answer sets (not clears) the ordinary session cookie. */
function setsSessionCookie(response: Response, name: string): boolean {
  const prefix = `${name}=`;
  return response.headers.getSetCookie().some((c) =>
    c.startsWith(prefix) && c.length > prefix.length && c[prefix.length] !== ";"
  );
}
