/**
 * Runs the whole test suite: installs the npm packages the other runtimes
 * load (tests/conformance/npm_packages.json), `deno test` over `tests/`
 * (which includes tests/examples_test.ts, the examples run as copied),
 * the framework examples built and served by their own tools
 * (tests/frameworks/), then every runtime's conformance run, and ends with one line
 * `N passed, N failed` that CI reads.
 *
 * Usage: `deno task test` (which runs this file with `-A`).
 *
 * @module
 */

const deno = Deno.execPath();

interface Tally {
  name: string;
  passed: number;
  failed: number;
  /** The failed tests' names and first message lines, for the summary. */
  failures?: string[];
}
const tallies: Tally[] = [];

/** An XML attribute's value, unescaped, or "". */
function attribute(attributes: string, name: string): string {
  const value = new RegExp(`\\b${name}="([^"]*)"`).exec(attributes)?.[1] ?? "";
  return value.replace(/&quot;/g, '"').replace(/&apos;/g, "'")
    .replace(/&lt;/g, "<").replace(/&gt;/g, ">").replace(/&amp;/g, "&");
}

/**
 * One line for a failed test case: its file, its name and the first line of
 * its failure, so that the end of a CI log names what failed.
 */
function failureLine(attributes: string, body: string): string {
  const failure = /<failure\b([^>]*)>/.exec(body)?.[1] ?? "";
  const message = attribute(failure, "message").split("\n")[0];
  return `${attribute(attributes, "classname")} > ${
    attribute(attributes, "name")
  }: ${message}`.slice(0, 400);
}

/**
 * Runs `deno test` with a JUnit report and counts test cases from it.
 *
 * @param name The run's name in the summary.
 * @param targets What to test, with any extra flags.
 */
async function runDenoTests(
  name: string,
  targets: string[],
  output: "inherit" | "piped" = "inherit",
): Promise<void> {
  // Each run its own report: two runs may go at once.
  const junit = await Deno.makeTempFile({ suffix: ".xml" });
  const args = [
    "test",
    "-A",
    // tests/ is not a workspace member: its npm packages have their own import
    // map and lockfile, so that the app's first start never downloads them.
    "--import-map=tests/import_map.json",
    "--lock=tests/deno.lock",
    `--junit-path=${junit}`,
    ...targets,
  ];
  const child = new Deno.Command(deno, {
    args,
    stdout: output,
    stderr: output,
  }).spawn();
  let status: Deno.CommandStatus;
  if (output === "piped") {
    // A run beside another: its output in one piece once it is done.
    const out = await child.output();
    status = out;
    await Deno.stdout.write(out.stdout);
    await Deno.stdout.write(out.stderr);
  } else status = await child.status;
  let passed = 0;
  let failed = 0;
  const failures: string[] = [];
  try {
    const xml = await Deno.readTextFile(junit);
    // One <testcase> per test and per step; a failure holds a <failure>.
    for (
      const m of xml.matchAll(
        /<testcase\b([^>]*?)(\/>|>([\s\S]*?)<\/testcase>)/g,
      )
    ) {
      if (m[3] && /<failure\b/.test(m[3])) {
        failed++;
        failures.push(failureLine(m[1], m[3]));
      } else passed++;
    }
  } catch {
    // No report: the run itself broke.
  }
  if (!status.success && failed === 0) failed = 1; // a crash counts as a failure
  tallies.push({ name, passed, failed, failures });
}

/**
 * Other runs (one per runtime) register here: each is a command whose last
 * line is `N passed, N failed`.
 */
const extraRuns: { name: string; cmd: string[] }[] = [
  ...["deno", "hono", "bun", "node", "vercel_edge", "cloudflare_workers"].map(
    (runtime) => ({
      name: `conformance: ${runtime}`,
      cmd: [
        deno,
        "run",
        "-A",
        "--import-map=tests/import_map.json",
        "--lock=tests/deno.lock",
        `tests/conformance/run_${runtime}.ts`,
      ],
    }),
  ),
];

async function runExtra(name: string, cmd: string[]): Promise<void> {
  const child = new Deno.Command(cmd[0], {
    args: cmd.slice(1),
    stdout: "piped",
    stderr: "inherit",
  }).spawn();
  const out = await child.output();
  const text = new TextDecoder().decode(out.stdout);
  await Deno.stdout.write(out.stdout);
  const last = text.trim().split("\n").reverse().find((l) =>
    /\d+ passed, \d+ failed/.test(l)
  );
  const m = last?.match(/(\d+) passed, (\d+) failed/);
  let passed = m ? Number(m[1]) : 0;
  let failed = m ? Number(m[2]) : 1;
  if (!out.success && failed === 0) failed = 1;
  if (!m) passed = 0;
  tallies.push({ name, passed, failed });
}

/**
 * Installs the npm packages the other runtimes load from node_modules
 * (Bun itself, the drivers, esbuild, edge-runtime). A failure is reported
 * and the runs that need them fail in their turn under CI.
 */
async function installRuntimePackages(): Promise<void> {
  const { packages } = JSON.parse(
    await Deno.readTextFile("tests/conformance/npm_packages.json"),
  ) as { packages: string[] };
  const npm = Deno.build.os === "windows" ? "npm.cmd" : "npm";
  try {
    const out = await new Deno.Command(npm, {
      args: [
        "install",
        "--no-save",
        "--no-package-lock",
        "--no-audit",
        "--no-fund",
        ...packages,
      ],
      stdout: "inherit",
      stderr: "inherit",
    }).output();
    if (!out.success) console.log("npm install of the runtime packages failed");
  } catch (error) {
    console.log(`npm could not run: ${(error as Error).message}`);
  }
}

// First: tests/examples_test.ts runs the npm examples from node_modules.
await installRuntimePackages();
// The framework examples (npm installs and builds, mostly waiting on the
// network and the disk) run beside the library's tests: one after the
// other they would not fit the suite's time.
await Promise.all([
  runDenoTests("deno test", [
    "--doc", // every @example in the library runs too
    // The framework examples build with their own tools: their own run beside.
    "--ignore=tests/frameworks/",
    "tests/",
    "mod.ts",
    "lib/",
    "stores/",
    "packages/",
    "docs/", // the user documentation's examples
  ]),
  // Each framework example, installed from npm, built and served by the
  // framework's own commands, then driven over HTTP (tests/frameworks/).
  runDenoTests("frameworks", ["tests/frameworks/"], "piped"),
]);
for (const run of extraRuns) await runExtra(run.name, run.cmd);

let passed = 0;
let failed = 0;
console.log("\nSummary:");
for (const t of tallies) {
  console.log(`  ${t.name}: ${t.passed} passed, ${t.failed} failed`);
  for (const line of t.failures ?? []) console.log(`    FAILED ${line}`);
  passed += t.passed;
  failed += t.failed;
}
console.log(`${passed} passed, ${failed} failed`);
Deno.exit(failed === 0 ? 0 : 1);
