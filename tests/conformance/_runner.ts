/**
 * Test support shared by the conformance runners: starting and watching a
 * server process, waiting for it, running the contract, and the closing
 * line `N passed, N failed` that tests/run_all.ts reads.
 *
 * A runtime that cannot start prints `SKIPPED: <why>` and `0 passed, 0
 * failed`; under `CI=true` it is a failure instead.
 *
 * @module
 */
import { type ContractResult, runContract } from "./contract.ts";
import { type MailSink, startMailSink } from "./mail_sink.ts";
import { ROOT, SCRATCH } from "./_import_map.ts";
import type { SignInOptions } from "./_signin_services.ts";

/** True under CI, where a runtime that cannot start is a failure. */
export const inCI: boolean = Deno.env.get("CI") === "true";

/** A 32-byte-plus random secret for one run. */
export function randomSecret(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(48));
  return btoa(String.fromCharCode(...bytes));
}

/**
 * Answers a free TCP port on 127.0.0.1.
 *
 * @returns The port.
 */
export function freePort(): number {
  const l = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const port = (l.addr as Deno.NetAddr).port;
  l.close();
  return port;
}

/** A fresh scratch directory for one run. */
export async function scratchDir(name: string): Promise<string> {
  await Deno.mkdir(SCRATCH, { recursive: true });
  return await Deno.makeTempDir({ dir: SCRATCH, prefix: `${name}-` });
}

/** A server process and its captured output. */
export interface ServerProcess {
  /** The child. */
  child: Deno.ChildProcess;
  /** Everything it printed so far (stdout and stderr). */
  output: () => string;
  /** Stops it and waits. */
  stop: () => Promise<void>;
}

/**
 * Spawns a server process with captured output.
 *
 * @param cmd The command and its arguments.
 * @param env Environment variables added to the current ones.
 * @param cwd The working directory; default the repository root.
 * @returns The process.
 */
export function spawnServer(
  cmd: string[],
  env: Record<string, string>,
  cwd: string = ROOT,
): ServerProcess {
  const child = new Deno.Command(cmd[0], {
    args: cmd.slice(1),
    cwd,
    env,
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  let text = "";
  const decoder = new TextDecoder();
  const pump = async (stream: ReadableStream<Uint8Array>) => {
    for await (const chunk of stream) text += decoder.decode(chunk);
  };
  const pumped = Promise.all([pump(child.stdout), pump(child.stderr)]);
  return {
    child,
    output: () => text,
    stop: async () => {
      try {
        child.kill("SIGTERM");
      } catch {
        // already gone
      }
      await child.status;
      await pumped.catch(() => {});
    },
  };
}

/**
 * Polls a URL until it answers (any status).
 *
 * @param url The URL.
 * @param timeoutMs How long to wait.
 * @param alive Answers false once the server process has exited.
 * @returns Whether it answered in time.
 */
export async function waitForHttp(
  url: string,
  timeoutMs: number,
  alive: () => boolean = () => true,
): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline && alive()) {
    try {
      const res = await fetch(url, { redirect: "manual" });
      await res.body?.cancel();
      return true;
    } catch {
      await new Promise((r) => setTimeout(r, 100));
    }
  }
  return false;
}

/** What a runner reports before its checks: the stores it used, limitations. */
export interface RunnerSetup {
  /** The runtime, for example `Bun 1.4.5`. */
  label: string;
  /** Lines printed before the checks (stores, versions, limitations). */
  about: string[];
  /** The PBKDF2 route full-strength hashing must take; default `webcrypto`. */
  expectRoute?: "webcrypto" | "wasm" | "javascript";
}

/**
 * Prints the runtime's header, runs the contract against `baseUrl`,
 * prints the notes and the closing line, and answers the tally.
 *
 * @param setup The runtime's name and description.
 * @param baseUrl Where the app listens.
 * @param mail The mail sink the app sends to.
 * @param signIn The app's secret and OpenID Provider, for the sign-in
 * methods' rows (signin_contract.ts).
 * @returns The tally.
 */
export async function runAndReport(
  setup: RunnerSetup,
  baseUrl: string,
  mail: MailSink,
  signIn?: SignInOptions,
): Promise<ContractResult> {
  console.log(`# conformance: ${setup.label} at ${baseUrl}`);
  for (const line of setup.about) console.log(`# ${line}`);
  const t0 = performance.now();
  const result = await runContract({
    baseUrl,
    mail,
    label: setup.label,
    expectRoute: setup.expectRoute,
    signIn,
  });
  for (const note of result.notes) console.log(`# ${note}`);
  console.log(
    `# ${setup.label}: ${result.passed + result.failed} checks in ${
      Math.round(performance.now() - t0)
    } ms`,
  );
  return result;
}

/**
 * Prints `SKIPPED: <why>` (or, under CI, a failure) and the closing line,
 * then exits.
 *
 * @param why Why the runtime could not start.
 * @param output The server's output, printed under CI.
 */
export function skipOrFail(why: string, output = ""): never {
  if (inCI) {
    console.log(`FAIL - runtime could not start: ${why}`);
    if (output) console.log(output.slice(-4000));
    console.log("0 passed, 1 failed");
    Deno.exit(1);
  }
  console.log(`SKIPPED: ${why}`);
  if (output) console.log(output.slice(-2000));
  console.log("0 passed, 0 failed");
  Deno.exit(0);
}

/**
 * Prints the closing line and exits with the tally's status.
 *
 * @param result The tally.
 * @param output The server's output, printed when a check failed.
 */
export function finish(result: ContractResult, output = ""): never {
  if (result.failed > 0 && output) {
    console.log("# server output (last 4000 characters):");
    console.log(output.slice(-4000));
  }
  console.log(`${result.passed} passed, ${result.failed} failed`);
  Deno.exit(result.failed === 0 ? 0 : 1);
}

export { startMailSink };
export { signInAbout, startSignInServices } from "./_signin_services.ts";
