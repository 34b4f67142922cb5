// The security kit of @portcullis/accounts against this app on Bun:
// `bun test` (or `npm test`) starts server.ts on a free port with a fresh
// database and reads the mailed links from its output.
import { test } from "bun:test";
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
  const port = await new Promise<number>((resolve) => {
    const probe = createServer().listen(0, "127.0.0.1", () => {
      const { port } = probe.address() as { port: number };
      probe.close(() => resolve(port));
    });
  });
  const base = `http://127.0.0.1:${port}`;
  const dir = mkdtempSync(join(tmpdir(), "portcullis-test-"));
  // No mail API: each mailed link is logged (`[mail not sent]`).
  const { RESEND_API_KEY: _, ...env } = process.env;
  const server = spawn(process.execPath, ["server.ts"], {
    env: {
      ...env,
      HOST: "127.0.0.1",
      PORT: String(port),
      APP_ORIGIN: base,
      AUTH_SECRET: randomBytes(32).toString("base64"),
      DATABASE_URL: `file:${join(dir, "app.db")}`,
    },
  });
  let output = "";
  server.stdout.on("data", (chunk) => output += chunk);
  server.stderr.on("data", (chunk) => output += chunk);
  try {
    for (let i = 0; !output.includes("Listening on"); i++) {
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
}, 120_000);
