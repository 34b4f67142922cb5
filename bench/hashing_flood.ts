/**
 * Issue 27, "CPU by hashing": a trusted user's sign-in under a flood of
 * anonymous sign-ins from 64 addresses, with and without the app's bound on
 * password hashing (`hashing` of `accounts()`, `HashingGate`).
 *
 * Run:
 *
 * ```sh
 * deno run -A --import-map=bench/import_map.json --lock=bench/deno.lock bench/hashing_flood.ts [--logins 30] [--flood 64] [--pause 0] [--control] [--only bound|none]
 * ```
 *
 * The app runs as a child process (`bench/_app_server.ts`: memory stores,
 * the default 600000-iteration PBKDF2, `trustedProxies: "127.0.0.1"`, so
 * each flood client presents its own address in `X-Forwarded-For`). The
 * user signs in once from a form, which gives the browser its device
 * cookie; then `--logins` sequential JSON sign-ins carrying that cookie are
 * timed idle, then again while `--flood` clients, each from its own
 * address, send anonymous sign-ins (an unknown email, a wrong password)
 * back to back (`--pause` milliseconds apart on each connection; wrk, its
 * own process). Target: the trusted p50 under the flood within 1.5× of
 * idle. The same run without the bound shows what it prevents.
 *
 * @module
 */
import { flags, machineNote, percentile, startApp } from "./_app_load.ts";
import type { HashingGateOptions } from "../packages/accounts/mod.ts";

const args = flags(Deno.args);
const logins = Number(args.logins ?? 30);
const floodSize = Number(args.flood ?? 64);
// Milliseconds each flood connection waits between its sign-ins; 0 sends
// the next as soon as the answer arrives (wrk at full speed on the same
// cores as the server).
const pause = Number(args.pause ?? 0);
// `--control`: the same flood, but each body is cut short (malformed JSON), so
// the app answers 400 before any hashing: what the flood costs the trusted
// sign-in through HTTP alone (the floor no hashing bound can lower).
const control = args.control !== undefined;

interface Run {
  label: string;
  idle: number[];
  flooded: number[];
  statuses: string;
}

async function measure(
  label: string,
  hashing: HashingGateOptions | false | undefined,
): Promise<Run> {
  const app = await startApp({
    users: "memory",
    kv: "memory",
    userCount: 1,
    trustedProxies: "127.0.0.1",
    hashing,
  });
  try {
    const email = app.ready.emails[0];
    const password = app.ready.password;
    // The browser's first sign-in: a form, which sets the device cookie.
    const first = await fetch(`${app.origin}/login`, {
      method: "POST",
      headers: {
        "content-type": "application/x-www-form-urlencoded",
        "x-forwarded-for": "192.0.2.10",
      },
      body: new URLSearchParams({ email, password }),
      redirect: "manual",
    });
    await first.body?.cancel();
    const device = first.headers.getSetCookie()
      .map((c) => c.split(";")[0])
      .find((c) => c.split("=")[0].endsWith("device"));
    if (first.status !== 303 || device === undefined) {
      throw new Error(
        `the first sign-in answered ${first.status}, no device cookie`,
      );
    }
    const trustedLogin = async (): Promise<number> => {
      const start = performance.now();
      const res = await fetch(`${app.origin}/login`, {
        method: "POST",
        headers: {
          "content-type": "application/json",
          accept: "application/json",
          cookie: device,
          "x-forwarded-for": "192.0.2.10",
        },
        body: JSON.stringify({ email, password }),
      });
      await res.body?.cancel();
      const ms = performance.now() - start;
      if (res.status !== 200) throw new Error(`trusted sign-in: ${res.status}`);
      return ms;
    };
    await trustedLogin(); // warm-up
    const idle: number[] = [];
    for (let i = 0; i < logins; i++) idle.push(await trustedLogin());

    // The flood: wrk (one C thread, its own process, so the timing client
    // below shares no event loop with it), each request from the next of
    // `--flood` addresses, an unknown email and a wrong password.
    const script = await Deno.makeTempFile({ suffix: ".lua" });
    await Deno.writeTextFile(
      script,
      `local threads = {}
function setup(thread) table.insert(threads, thread) end
busy = 0
response = function(status) if status == 503 then busy = busy + 1 end end
function done()
  local n = 0
  for _, t in ipairs(threads) do n = n + t:get("busy") end
  io.write("busy: " .. n .. "\\n")
end
${pause > 0 ? `delay = function() return ${pause} end` : ""}
local i = 0
request = function()
  i = i + 1
  local address = "198.18." .. math.floor((i % ${floodSize}) / 250) .. "." .. ((i % ${floodSize}) % 250 + 1)
  local body = '{"email":"nobody-' .. i .. '@example.com","password":"a wrong password, long enough"${
        control ? "" : "}"
      }'
  return wrk.format("POST", "/login", {
    ["content-type"] = "application/json",
    ["accept"] = "application/json",
    ["x-forwarded-for"] = address,
  }, body)
end
`,
    );
    const wrk = new Deno.Command("wrk", {
      args: [
        "-t1",
        `-c${floodSize}`,
        "-d600s",
        "--timeout",
        "60s",
        "-s",
        script,
        app.origin,
      ],
      stdout: "piped",
      stderr: "piped",
    }).spawn();
    // Let the flood fill the server before timing.
    await new Promise((r) => setTimeout(r, 1500));
    const flooded: number[] = [];
    for (let i = 0; i < logins; i++) flooded.push(await trustedLogin());
    wrk.kill("SIGINT");
    const out = new TextDecoder().decode((await wrk.output()).stdout);
    await Deno.remove(script);
    const total = Number(out.match(/(\d+) requests in/)?.[1] ?? NaN);
    const non2xx = Number(
      out.match(/Non-2xx or 3xx responses: (\d+)/)?.[1] ?? 0,
    );
    const busy = Number(out.match(/busy: (\d+)/)?.[1] ?? NaN);
    const statuses = `${total} sign-ins: ${busy}× 503, ${non2xx - busy}× ${
      control ? 400 : 401
    }`;
    return { label, idle, flooded, statuses };
  } finally {
    await app.stop();
  }
}

const fmt = (n: number) => n.toFixed(0);
console.log(
  `| run | trusted p50 idle (ms) | p50 under a ${floodSize}-address flood (ms) | ratio | p90 idle / flood (ms) | flood answers |`,
);
console.log("| --- | --- | --- | --- | --- | --- |");
const which = args.only;
for (
  const [label, hashing] of [
    ["bound (default: CPUs, 1 reserved, queue 16)", undefined],
    ["no bound (`hashing: false`)", false],
  ] as const
) {
  if (which === "bound" && hashing === false) continue;
  if (which === "none" && hashing !== false) continue;
  const run = await measure(
    `${label}${control ? ", control flood (400, no hashing)" : ""}${
      pause > 0 ? `, ${pause} ms apart per connection` : ", at full speed"
    }`,
    hashing,
  );
  const idle = percentile(run.idle, 50);
  const flooded = percentile(run.flooded, 50);
  const answers = run.statuses;
  console.log(
    `| ${run.label} | ${fmt(idle)} | ${fmt(flooded)} | ${
      (flooded / idle).toFixed(2)
    }× | ${fmt(percentile(run.idle, 90))} / ${
      fmt(percentile(run.flooded, 90))
    } | ${answers} |`,
  );
}
console.log(`\n${logins} trusted sign-ins each; ${machineNote()}`);
