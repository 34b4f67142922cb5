// Hardening finding 5: a token whose jti carries an issue time in the future
// would survive revokeAll (its session "began" after every cut-off). Such a
// token is refused beyond a small clock skew (60 s by default).
import assert from "node:assert/strict";
import { signToken } from "../../lib/tokens/signed_token.ts";
import {
  encodeSessionPayload,
  newJti,
} from "../../lib/session/session_payload.ts";
import { SecretProvider } from "../../mod.ts";
import { makeManager, SECRET } from "./_helpers.ts";

async function forge(issuedAtMs: number, expiresAt: number): Promise<string> {
  // A token minted with the real key (as a second server with a fast clock
  // would mint it): the MAC is valid, only the issue time is late.
  const keys = await SecretProvider.fromValue(SECRET).keys("session");
  const identity = {
    subject: "user_1",
    jti: newJti(issuedAtMs, crypto.getRandomValues(new Uint8Array(16))),
    issuedAt: issuedAtMs,
    expiresAt,
  };
  return await signToken(
    keys.current,
    "session",
    encodeSessionPayload(identity),
  );
}

Deno.test("finding 5: a token issued more than 60 s in the future is refused, so revokeAll ends it", async () => {
  const { sessions, clock } = makeManager();
  const now = clock.ms;
  const future = await forge(now + 3600_000, Math.floor(now / 1000) + 7200);
  assert.equal(await sessions.resolve(future), null);

  // Within the skew (clocks of two servers differ a little) it resolves.
  const slightlyAhead = await forge(
    now + 30_000,
    Math.floor(now / 1000) + 7200,
  );
  assert.equal((await sessions.resolve(slightlyAhead))?.subject, "user_1");
});

Deno.test("finding 5: clockSkewSeconds is configurable and 0 refuses any future issue time", async () => {
  const { sessions, clock } = makeManager({ clockSkewSeconds: 0 });
  const token = await forge(
    clock.ms + 1000,
    Math.floor(clock.ms / 1000) + 7200,
  );
  assert.equal(await sessions.resolve(token), null);
  assert.throws(() => makeManager({ clockSkewSeconds: -1 }), RangeError);
});
