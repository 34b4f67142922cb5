/**
 * Soak: the reference app under minutes of mixed traffic (issue 9, item
 * 12). Reports 5xx (must be 0), RSS at minute 1 and at the last minute
 * (growth must stay under 10%), and p50/p99 latency per minute.
 *
 * ```sh
 * deno run -A bench/soak.ts                          # 10 minutes, main.ts's stores
 * deno run -A bench/soak.ts --minutes 3 --users libsql-file
 * ```
 *
 * The app runs as a child process (`bench/_app_server.ts`) with the stores
 * `examples/app/main.ts` uses by default: users and tokens in a local
 * SQLite file (`--users sqlite-file`; `libsql-file` is the
 * `@libsql/client` path main.ts used before) and sessions, rate limits and
 * notes in Deno KV (`--kv denokv`). 200 verified users with warm Bearer
 * tokens. `--connections` (16) clients on 127.0.0.1 each send, per 100
 * requests: one login (`POST /login`, JSON, the app's default PBKDF2) or
 * logout (`POST /logout` of that login's token), alternately; 4
 * `POST /api/notes` and 4 `GET /api/notes/:id`; and 91 `GET /api/me`, each
 * with a warm token or the client's own.
 *
 * @module
 */
import {
  flags,
  machineNote,
  percentile,
  runLoad,
  startApp,
  type Window,
} from "./_app_load.ts";
import type { ServerConfig } from "./_app_server.ts";

const args = flags(Deno.args);
const minutes = Number(args.minutes ?? 10);
const connections = Number(args.connections ?? 16);
const users = (args.users ?? "sqlite-file") as ServerConfig["users"];
const kv = (args.kv ?? "denokv") as ServerConfig["kv"];
// `--logins false`: no login or logout (to tell their share of the memory).
const logins = args.logins !== "false";

const app = await startApp({ users, kv });
const { tokens, emails, password } = app.ready;
const EXPECTED: Record<string, number> = {
  me: 200,
  login: 200,
  logout: 204,
  "note-create": 201,
  "note-get": 200,
};

interface ClientState {
  own: string | null;
  note: string | null;
}
const clients: ClientState[] = Array.from(
  { length: connections },
  () => ({ own: null, note: null }),
);
const unexpected: Record<string, number> = {};
const rss: number[] = [];
const gcRss: Promise<number>[] = [];
const gcHeap: Promise<number>[] = [];
const gcHeapTotal: Promise<number>[] = [];

function bearer(token: string): Record<string, string> {
  return { authorization: `Bearer ${token}` };
}

const make = (w: number, n: number) => {
  const c = clients[w];
  const warm = tokens[(w * 7919 + n) % tokens.length];
  const token = c.own !== null && n % 2 === 0 ? c.own : warm;
  const r = n % 100;
  const json = { "content-type": "application/json" };
  const check = (kind: string) => (res: Response) => {
    if (res.status !== EXPECTED[kind]) {
      const key = `${kind} ${res.status}`;
      unexpected[key] = (unexpected[key] ?? 0) + 1;
    }
  };
  if (r === 0 && c.own === null && logins) {
    return {
      kind: "login",
      request: new Request(`${app.origin}/login`, {
        method: "POST",
        headers: json,
        body: JSON.stringify({
          email: emails[(w * 31 + n) % emails.length],
          password,
        }),
      }),
      after: (res: Response, body: string) => {
        check("login")(res);
        if (res.status === 200) {
          c.own = (JSON.parse(body) as { token: string }).token;
        }
      },
    };
  }
  if (r === 0 && c.own !== null && logins) {
    const own = c.own;
    c.own = null;
    return {
      kind: "logout",
      request: new Request(`${app.origin}/logout`, {
        method: "POST",
        headers: bearer(own),
      }),
      after: check("logout"),
    };
  }
  if (r % 25 === 5) {
    return {
      kind: "note-create",
      request: new Request(`${app.origin}/api/notes`, {
        method: "POST",
        headers: { ...json, ...bearer(token) },
        body: JSON.stringify({ text: `soak note ${w}.${n}` }),
      }),
      after: (res: Response, body: string) => {
        check("note-create")(res);
        if (res.status === 201) {
          c.note = (JSON.parse(body) as { id: string }).id;
        }
      },
    };
  }
  if (r % 25 === 6 && c.note !== null) {
    return {
      kind: "note-get",
      request: new Request(`${app.origin}/api/notes/${c.note}`, {
        headers: bearer(token),
      }),
      after: check("note-get"),
    };
  }
  return {
    kind: "me",
    request: new Request(`${app.origin}/api/me`, { headers: bearer(token) }),
    after: check("me"),
  };
};

console.error(
  `soak: ${minutes} min, ${connections} clients, users ${users}, kv ${kv}, logins ${logins}, app pid ${app.pid}`,
);
let windows: Window[];
try {
  windows = await runLoad(make, {
    connections,
    seconds: minutes * 60,
    windowSeconds: 60,
    onWindow: (w, i) => {
      rss[i] = app.rssMiB();
      const m = app.memoryAfterGC();
      gcRss[i] = m.then((m) => m.rss, () => NaN);
      gcHeap[i] = m.then((m) => m.heapUsed, () => NaN);
      gcHeapTotal[i] = m.then((m) => m.heapTotal, () => NaN);
      const fivexx = Object.entries(w.statuses)
        .filter(([s]) => Number(s) >= 500).reduce((n, [, c]) => n + c, 0);
      console.error(
        `minute ${i + 1}: ${w.count} requests, 5xx ${fivexx}, p50 ${
          percentile(w.latencies, 50).toFixed(2)
        } ms, p99 ${percentile(w.latencies, 99).toFixed(2)} ms, RSS ${
          rss[i].toFixed(1)
        } MiB`,
      );
    },
  });
  await Promise.all(gcRss);
} finally {
  await app.stop();
}
const gcRssMiB = await Promise.all(gcRss);
const gcHeapMiB = await Promise.all(gcHeap);
const gcHeapTotalMiB = await Promise.all(gcHeapTotal);

let total = 0;
let fivexx = 0;
let failed = 0;
const kinds: Record<string, number> = {};
console.log(
  `\nSoak: ${minutes} min, ${connections} clients, users \`${users}\`, key-value \`${kv}\`${
    logins ? "" : ", no logins or logouts"
  }. ${machineNote()}.\n`,
);
console.log(
  "| minute | requests | req/s | 5xx | network errors | p50 ms | p99 ms | max ms | RSS at the end (MiB) | RSS after a full GC (MiB) | JS heap after it (MiB) | JS heap committed (MiB) |",
);
console.log(
  "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |",
);
windows.forEach((w, i) => {
  const five = Object.entries(w.statuses)
    .filter(([s]) => Number(s) >= 500).reduce((n, [, c]) => n + c, 0);
  total += w.count;
  fivexx += five;
  failed += w.statuses[0] ?? 0;
  for (const [k, c] of Object.entries(w.kinds)) kinds[k] = (kinds[k] ?? 0) + c;
  console.log(
    `| ${i + 1} | ${w.count} | ${(w.count / 60).toFixed(0)} | ${five} | ${
      w.statuses[0] ?? 0
    } | ${percentile(w.latencies, 50).toFixed(2)} | ${
      percentile(w.latencies, 99).toFixed(2)
    } | ${w.max.toFixed(0)} | ${rss[i]?.toFixed(1) ?? "-"} | ${
      gcRssMiB[i]?.toFixed(1) ?? "-"
    } | ${gcHeapMiB[i]?.toFixed(1) ?? "-"} | ${
      gcHeapTotalMiB[i]?.toFixed(1) ?? "-"
    } |`,
  );
});
const first = rss[0];
const last = rss[windows.length - 1];
const growth = ((last - first) / first) * 100;
const gcFirst = gcRssMiB[0];
const gcLast = gcRssMiB[windows.length - 1];
const gcGrowth = ((gcLast - gcFirst) / gcFirst) * 100;
console.log(
  `\nTotal ${total} requests (${
    Object.entries(kinds).map(([k, c]) => `${k} ${c}`).join(", ")
  }); 5xx: ${fivexx}; network errors: ${failed}; unexpected statuses: ${
    JSON.stringify(unexpected)
  }.`,
);
console.log(
  `After a full GC: minute 1 ${
    gcFirst.toFixed(1)
  } MiB, minute ${windows.length} ${gcLast.toFixed(1)} MiB, growth ${
    gcGrowth.toFixed(1)
  }%.`,
);
console.log(
  `RSS minute 1: ${first.toFixed(1)} MiB, minute ${windows.length}: ${
    last.toFixed(1)
  } MiB, growth ${growth.toFixed(1)}% (target < 10%): ${
    growth < 10 && fivexx === 0 ? "PASS" : "FAIL"
  }.`,
);
