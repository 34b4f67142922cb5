// Store failures are logged by kind only: a driver's message echoes the
// failed command, whose key names carry session ids and subject ids.
import assert from "node:assert/strict";
import { logAuthEvent } from "../../lib/http/mod.ts";

function captured(f: () => void): string {
  const lines: string[] = [];
  const original = console.error;
  console.error = (...args: unknown[]) => lines.push(args.join(" "));
  try {
    f();
  } finally {
    console.error = original;
  }
  return lines.join("\n");
}

Deno.test("a store failure is logged without the driver's message (no jti or subject in logs)", () => {
  const jti = "AZqkP3x0AAAAbWFkZS11cC1qdGktdmFsdWU";
  const error = Object.assign(
    new Error(
      `Command failed: command was: [["mget","p:deny:${jti}","p:cut:user_42"]]`,
    ),
    { name: "UpstashError", code: "ECONNRESET" },
  );
  const line = captured(() =>
    logAuthEvent({ type: "store_unavailable", error })
  );
  assert.equal(
    line,
    "portcullis: store_unavailable: UpstashError (ECONNRESET)",
  );
  assert.doesNotMatch(line, new RegExp(jti));
  assert.doesNotMatch(line, /user_42/);
});

Deno.test("other events keep their message", () => {
  const line = captured(() =>
    logAuthEvent({ type: "misconfigured", message: "AUTH_SECRET is not set" })
  );
  assert.equal(line, "portcullis: misconfigured: AUTH_SECRET is not set");
});
