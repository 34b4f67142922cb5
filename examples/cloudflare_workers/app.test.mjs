// The security kit of @portcullis/accounts against this Worker in workerd:
// `npm test` bundles it as `wrangler deploy` does (--dry-run), runs the
// bundle in Miniflare (wrangler's local workerd) with a fresh KV namespace
// and D1 database on a free port, and reads the mailed links from a
// recording mail API on 127.0.0.1.
import { test } from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { createRequire } from "node:module";
import { join } from "node:path";
import process from "node:process";
import { fileURLToPath } from "node:url";
import { serve } from "@portcullis/auth/adapters/node";
import {
  formatKitReport,
  mailRecorder,
  runAccountsKit,
} from "@portcullis/accounts/testing";

// The Miniflare (and workerd) that wrangler runs, not a second copy.
const wrangler = new URL("node_modules/wrangler/", import.meta.url);
const { Miniflare } = createRequire(wrangler)("miniflare");

test("the app keeps the guarantees of @portcullis/accounts", async () => {
  const dir = mkdtempSync(join(tmpdir(), "portcullis-test-"));
  execFileSync(process.execPath, [
    fileURLToPath(new URL("bin/wrangler.js", wrangler)),
    ...["deploy", "--dry-run", "--outdir", dir],
  ], {
    env: { ...process.env, WRANGLER_SEND_METRICS: "false" },
    stdio: ["ignore", "ignore", "inherit"],
  });
  const port = await new Promise((resolve) => {
    const probe = createServer().listen(0, "127.0.0.1", () => {
      const { port } = probe.address();
      probe.close(() => resolve(port));
    });
  });
  const recorder = mailRecorder();
  const mail = await serve(recorder.fetch, { port: 0, hostname: "127.0.0.1" });
  const toml = readFileSync("wrangler.toml", "utf8");
  const mf = new Miniflare({
    modules: true,
    scriptPath: join(dir, "worker.js"),
    modulesRoot: dir,
    modulesRules: [{ type: "CompiledWasm", include: ["**/*.wasm"] }],
    compatibilityDate: toml.match(/compatibility_date = "(.+)"/)[1],
    host: "127.0.0.1",
    port,
    kvNamespaces: ["AUTH_KV"],
    d1Databases: ["DB"],
    bindings: {
      AUTH_SECRET: randomBytes(32).toString("base64"),
      APP_ORIGIN: `http://127.0.0.1:${port}`,
      RESEND_API_KEY: recorder.apiKey,
      RESEND_BASE_URL: `http://127.0.0.1:${mail.address().port}`,
    },
  });
  try {
    const report = await runAccountsKit({
      baseUrl: (await mf.ready).origin,
      mail: recorder.read,
    });
    console.log(formatKitReport(report));
    assert.equal(report.failed, 0, "every check passed");
    assert.ok(report.passed > 0, "the kit ran its checks");
  } finally {
    await mf.dispose();
    mail.close();
    rmSync(dir, { recursive: true, force: true });
  }
});
