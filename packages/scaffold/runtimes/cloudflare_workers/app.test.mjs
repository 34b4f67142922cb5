// The security kit of @portcullis/accounts against this Worker in workerd:
// `npm test` starts `wrangler dev` (local KV and D1, kept in a temporary
// folder) on a free port and reads the mailed links from its output.
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import process from "node:process";
import {
  formatKitReport,
  logMailReader,
  runAccountsKit,
} from "@portcullis/accounts/testing";

test("the app keeps the guarantees of @portcullis/accounts", async () => {
  const port = await new Promise((resolve) => {
    const probe = createServer().listen(0, "127.0.0.1", () => {
      const { port } = probe.address();
      probe.close(() => resolve(port));
    });
  });
  const base = `http://127.0.0.1:${port}`;
  const dir = mkdtempSync(join(tmpdir(), "portcullis-test-"));
  const server = spawn(process.execPath, [
    "node_modules/wrangler/bin/wrangler.js",
    "dev",
    ...["--ip", "127.0.0.1", "--port", String(port), "--persist-to", dir],
    // No mail API (over .dev.vars): each link is logged (`[mail not sent]`).
    ...["--var", `APP_ORIGIN:${base}`, "--var", `RESEND_API_KEY:`],
    ...["--var", `AUTH_SECRET:${randomBytes(32).toString("base64")}`],
  ], { env: { ...process.env, WRANGLER_SEND_METRICS: "false" } });
  let output = "";
  server.stdout.on("data", (chunk) => output += chunk);
  server.stderr.on("data", (chunk) => output += chunk);
  try {
    for (let i = 0; !output.includes("Ready on"); i++) {
      assert.ok(i < 300 && server.exitCode === null, `no start:\n${output}`);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    const report = await runAccountsKit({
      baseUrl: base,
      mail: logMailReader(() => output),
    });
    console.log(formatKitReport(report));
    assert.equal(report.failed, 0, "every check passed");
    assert.ok(report.passed > 0, "the kit ran its checks");
  } finally {
    server.kill();
    rmSync(dir, { recursive: true, force: true });
  }
});
