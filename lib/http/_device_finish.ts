// After the handler, with device-bound sessions on: a sign-in or sign-out
// clears the bound cookie the request carried, as does a bound cookie that
// no longer holds; a signed-in, unbound cookie
// session (a sign-in, or a page navigation) is offered registration.
import type { RequestState } from "./_request_state.ts";
import type { DeviceBoundSessions } from "./device_bound_sessions.ts";

export async function finishDevice(
  device: DeviceBoundSessions,
  req: Request,
  response: Response,
  state: RequestState,
): Promise<Response> {
  const session = state.session;
  const offer = session.kind === "signedIn" && session.via === "cookie" &&
    session.identity.binding === undefined &&
    (state.changed || (req.method === "GET" && isNavigation(req)));
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

function isNavigation(req: Request): boolean {
  const dest = req.headers.get("sec-fetch-dest");
  if (dest !== null) return dest === "document";
  return (req.headers.get("accept") ?? "").includes("text/html");
}
