/**
 * Every subset of the optional sign-in methods makes a project that
 * type-checks, lints and passes its own tests (issue 18: "the generated
 * project with every subset of methods passes its own tests"), and so does
 * each of the account's own features (API keys, the operator's console) left
 * out, and the password alone.
 *
 * The modules come from the templates (`modules()`: every file under
 * `modules/` nothing else imports), never from a list here. All the
 * projects are written into one temporary workspace, so one `deno check`
 * and one `deno test --parallel` (an entry per project importing its test
 * files) cover them all (and `deno lint` the
 * projects with every module and with none: lint reads one file at a
 * time); the test
 * prints each subset's size (files, lines, bytes) and the time each step
 * took.
 *
 * @module
 */
import assert from "node:assert/strict";
import { modules, scaffold } from "../../packages/scaffold/mod.ts";

const root = new URL("../../", import.meta.url);

/** Every subset of `names`, as the modules left out. */
function subsets(names: readonly string[]): string[][] {
  const out: string[][] = [];
  for (let mask = 0; mask < 1 << names.length; mask++) {
    out.push(names.filter((_, i) => (mask & (1 << i)) !== 0));
  }
  return out;
}

async function run(
  args: string[],
  cwd: string,
  env: Record<string, string> = {},
) {
  const started = performance.now();
  const out = await new Deno.Command(Deno.execPath(), {
    args,
    cwd,
    stdout: "piped",
    stderr: "piped",
    env: { NO_COLOR: "1", DENO_NO_PACKAGE_JSON: "1", ...env },
  }).output();
  const text = new TextDecoder().decode(out.stdout) +
    new TextDecoder().decode(out.stderr);
  return {
    code: out.code,
    text,
    seconds: (performance.now() - started) / 1000,
  };
}

async function sizeOf(dir: string, files: string[]) {
  let lines = 0;
  let bytes = 0;
  for (const file of files) {
    const data = await Deno.readFile(`${dir}/${file}`);
    bytes += data.length;
    lines += new TextDecoder().decode(data).split("\n").length - 1;
  }
  return { files: files.length, lines, bytes };
}

Deno.test({
  name:
    "every subset of the optional modules makes a project that type-checks, lints and passes its own tests",
  fn: async () => {
    const optional = modules();
    assert.ok(
      optional.includes("verification") && optional.includes("magic_link"),
      `optional modules: ${optional.join(", ")}`,
    );
    const started = performance.now();
    const ws = await Deno.makeTempDir({ prefix: "portcullis-subsets-" });
    try {
      const members: string[] = [];
      const roots: string[] = [];
      const entries: { entry: string; files: number }[] = [];
      const report: string[] = [];
      // Every subset of the sign-in methods, with the account's own
      // features (API keys, the operator's console) in; and each of those
      // left out of the whole app, and both with everything else (the
      // password alone): their files import no sign-in method, so the
      // other combinations add nothing but time (256 projects took 7 min).
      const features = ["api_keys", "operator_console"].filter((m) =>
        optional.includes(m)
      );
      const methods = optional.filter((m) => !features.includes(m));
      const cases = [
        ...subsets(methods),
        ...features.map((f) => [f]),
        optional,
      ];
      for (const [i, without] of cases.entries()) {
        const name = `p${String(i).padStart(2, "0")}`;
        const dir = `${ws}/${name}`;
        const { written } = await scaffold(dir, {
          without,
          package: root.pathname,
        });
        for (const left of without) {
          assert.ok(
            !written.includes(`modules/${left}.ts`),
            `${name} writes no file of ${left}`,
          );
        }
        members.push(`./${name}`);
        const tests = written.filter((p) => p.endsWith("_test.ts"));
        roots.push(`${name}/main.ts`, ...tests.map((p) => `${name}/${p}`));
        // One entry per project imports all its test files, so the
        // project's modules load once for its tests, not once per file.
        const entry = `${name}_all_test.ts`;
        await Deno.writeTextFile(
          `${ws}/${entry}`,
          tests.map((p) => `import "./${name}/${p}";\n`).join(""),
        );
        entries.push({ entry, files: tests.length });
        const size = await sizeOf(
          dir,
          written.filter((p) => p !== "deno.lock"),
        );
        const kept = optional.filter((m) => !without.includes(m));
        report.push(
          `${name} ${
            kept.join("+") || "(password only)"
          }: ${size.files} files, ${size.lines} lines, ${size.bytes} bytes`,
        );
      }
      await Deno.writeTextFile(
        `${ws}/deno.json`,
        JSON.stringify({ workspace: members, unstable: ["kv"] }),
      );
      const written = (performance.now() - started) / 1000;

      const check = await run(["check", ...roots], ws);
      assert.equal(check.code, 0, `deno check:\n${check.text.slice(-4000)}`);
      // Lint reads one file at a time, and the subsets differ only in
      // which files they have and in modules.ts: the projects with every
      // module and with none cover every file and both ends of the list.
      const lint = await run(["lint", members[0], members.at(-1)!], ws);
      assert.equal(lint.code, 0, `deno lint:\n${lint.text.slice(-4000)}`);
      // Four at a time on two cores: a test waits on timers and sockets
      // about as long as it computes.
      const test = await run(
        [
          "test",
          "-A",
          "--no-check",
          "--parallel",
          ...entries.map((e) => e.entry),
        ],
        ws,
        { DENO_JOBS: "4" },
      );
      assert.equal(test.code, 0, `deno test:\n${test.text.slice(-6000)}`);
      // Every project's tests ran (at least one per test file), none failed.
      for (const { entry, files } of entries) {
        const passed = test.text.split("\n").filter((line) =>
          line.startsWith(`./${entry} => `) && / \.\.\. ok\b/.test(line)
        ).length;
        assert.ok(passed >= files, `${entry}: ${passed} tests passed`);
      }
      assert.doesNotMatch(test.text, /\bFAILED\b/);

      console.log(
        [
          `${subsets(optional).length} subsets of ${optional.join(", ")}`,
          ...report,
          `timing: write ${written.toFixed(1)} s, check ${
            check.seconds.toFixed(1)
          } s, lint ${lint.seconds.toFixed(1)} s, test ${
            test.seconds.toFixed(1)
          } s, total ${((performance.now() - started) / 1000).toFixed(1)} s`,
        ].join("\n"),
      );
    } finally {
      await Deno.remove(ws, { recursive: true });
    }
  },
});
