/**
 * Three instances of the reference app on one Redis Cluster (issue 16,
 * "Beyond one machine"): does a revocation made through one instance hold
 * on the others, does a registration race across instances make one
 * account, and does a primary's failover under load keep revoked tokens out
 * and answers within the deadline?
 *
 * ```sh
 * deno run -A --import-map=bench/import_map.json --lock=bench/deno.lock bench/cluster.ts
 * deno run -A --import-map=bench/import_map.json --lock=bench/deno.lock bench/cluster.ts \
 *   --connections 6 --rounds 3 --races 20 --staleness 2 --after-kill 15
 * ```
 *
 * What it starts (all on 127.0.0.1, each stopped by its PID when the run
 * ends, failure or not; the shared Redis on 6379 is never touched):
 *
 * - a private Redis Cluster, 3 primaries and 3 replicas on free ports
 *   (`startRedisCluster` of `tests/support/redis_servers.ts`);
 * - a PostgreSQL schema of its own on 127.0.0.1:5432 as the credential
 *   database of every instance (users, single-use tokens, events, TOTP and
 *   passkey tables), dropped at the end. PostgreSQL and not one SQLite
 *   file: instances that scale out run on several machines, where a shared
 *   SQLite file is not an option, and three writers on one SQLite file
 *   would measure its single-writer lock rather than the app;
 * - three app instances (`bench/_cluster_app.ts`: `createApp` with the
 *   denylist, rate limits, notes and session list in `RedisKV` on the
 *   cluster) and the round-robin proxy of `bench/_cluster_proxy.ts`.
 *
 * Two phases, each with fresh instances: `stale` (`revocationStaleness`
 * `--staleness` seconds, 2 by default), then `exact` (the default), which
 * ends with the registration race and the failover. During each phase
 * `--connections` clients run mixed traffic through the proxy: sign in
 * (`POST /login`), six authenticated reads (`GET /api/me`, and
 * `GET /api/notes/:id` of a note any signed-in user may read), sign out
 * (`POST /logout`), then one more read with the signed-out token, which
 * the proxy sends to another instance.
 *
 * Meanwhile, directed checks, each request sent to one instance directly:
 *
 * - revocations: for each of logout, revokeAll (`POST
 *   /account/sessions/revoke-others`), password change and account
 *   deletion, `--rounds` times: a user signs in once on each instance
 *   (three sessions), each session is read on each instance (which, with
 *   staleness, puts a "not revoked" answer in every instance's memory), the
 *   revocation is made through one instance (rotating), and from its answer
 *   on every revoked session is read on all three instances every 20 ms
 *   (exact) or 50 ms (stale) until each refuses it;
 * - registration race (exact phase): `--races` times, one new email
 *   registered through all three instances at once; counts 201s and 409s,
 *   and the rows in `users`;
 * - failover (exact phase, last): 30 sessions are signed out, then the
 *   primary holding the most denylist keys is killed with SIGKILL under
 *   load; a client keeps reading with the signed-out tokens for
 *   `--after-kill` (15) seconds while the replica takes over.
 *
 * Must be 0 (the exit code is 1 otherwise): protected 200s for a revoked
 * session sent after its revocation answered, in exact mode, on any
 * instance, failover included; with staleness, such 200s on the revoking
 * instance, and any later than the bound on the others; registration
 * rounds without exactly one account; answers slower than the deadline
 * (`--deadline-ms`, 2000) plus `--slack-ms` (500); 5xx other than 503 and
 * network errors; directed checks that could not run.
 *
 * @module
 */
import {
  type PrivateCluster,
  type PrivateRedis,
  rawCommand,
  requireRedisBinaries,
  startRedisCluster,
} from "../tests/support/redis_servers.ts";
import { flags, percentile } from "./_app_load.ts";
import {
  type Deployment,
  type Instance,
  openSharedDatabase,
  type SharedDatabase,
  startDeployment,
} from "./_cluster_deployment.ts";
import { INSTANCE_HEADER } from "./_cluster_proxy.ts";

const args = flags(Deno.args);
const connections = Number(args.connections ?? 6);
const stalenessSeconds = Number(args.staleness ?? 2);
const rounds = Number(args.rounds ?? 3);
const races = Number(args.races ?? 20);
const deadlineMs = Number(args["deadline-ms"] ?? 2000);
const slackMs = Number(args["slack-ms"] ?? 500);
const afterKillSeconds = Number(args["after-kill"] ?? 15);
const READS_PER_SESSION = 6;
const FAILOVER_TOKENS = 30;

const PASSWORD = "cluster bench password 4817";
const NEW_PASSWORD = "cluster bench new password 9264";
const KINDS = ["logout", "revokeAll", "password", "delete"] as const;
type Kind = typeof KINDS[number];

const t0 = performance.now();
const now = (): number => performance.now() - t0;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** One request as the client saw it. */
interface Sample {
  phase: string;
  kind: string;
  instance: string;
  sent: number;
  answered: number;
  status: number;
}

/** A session known to be revoked: when its revocation answered, and where. */
interface Revoked {
  phase: string;
  at: number;
  by: string;
  how: string;
}

/** A protected 200 for a revoked session, sent after its revocation answered. */
interface Late {
  phase: string;
  how: string;
  by: string;
  instance: string;
  /** From the revocation's answer to this 200's answer, ms. */
  delayMs: number;
}

/** One directed revocation check. */
interface Check {
  phase: string;
  how: Kind;
  by: string;
  /** From the revocation's answer until every instance refused every session, ms. */
  allRefusedMs: number;
  /** Sessions (× instances) still accepted when the probing gave up. */
  neverRefused: number;
}

const samples: Sample[] = [];
const revoked = new Map<string, Revoked>();
const late: Late[] = [];
/** Protected reads of revoked sessions sent after the revocation, by phase and revocation. */
const revokedReads = new Map<string, number>();
const checks: Check[] = [];
const problems: string[] = [];
let phase = "";

const client = Deno.createHttpClient({});
const PROTECTED = new Set(["me", "note"]);

interface Target {
  name: string;
  origin: string;
}

interface Answer {
  status: number;
  instance: string;
  // deno-lint-ignore no-explicit-any
  body: any;
  sent: number;
  answered: number;
}

/**
 * Sends one request, records it, and checks a protected 200 against the
 * revoked sessions.
 */
async function send(
  kind: string,
  target: Target,
  path: string,
  options: { method?: string; token?: string; json?: unknown } = {},
): Promise<Answer> {
  const headers: Record<string, string> = { accept: "application/json" };
  if (options.token) headers.authorization = `Bearer ${options.token}`;
  let body: string | undefined;
  if (options.json !== undefined) {
    headers["content-type"] = "application/json";
    body = JSON.stringify(options.json);
  }
  const sent = now();
  let status = 0;
  let instance = target.name;
  // deno-lint-ignore no-explicit-any
  let parsed: any = null;
  try {
    const res = await fetch(target.origin + path, {
      method: options.method ?? "GET",
      headers,
      body,
      client,
      redirect: "manual",
      signal: AbortSignal.timeout(30_000),
    });
    const text = await res.text();
    status = res.status;
    instance = res.headers.get(INSTANCE_HEADER) ?? instance;
    try {
      parsed = text ? JSON.parse(text) : null;
    } catch {
      parsed = null;
    }
  } catch {
    status = 0;
  }
  const answered = now();
  samples.push({ phase, kind, instance, sent, answered, status });
  const r = options.token && PROTECTED.has(kind)
    ? revoked.get(options.token)
    : undefined;
  if (r !== undefined && sent >= r.at) {
    const key = `${phase}|${r.how}`;
    revokedReads.set(key, (revokedReads.get(key) ?? 0) + 1);
    if (status === 200) {
      late.push({
        phase,
        how: r.how,
        by: r.by,
        instance,
        delayMs: answered - r.at,
      });
    }
  }
  return { status, instance, body: parsed, sent, answered };
}

async function login(target: Target, email: string): Promise<string | null> {
  const a = await send("login", target, "/login", {
    method: "POST",
    json: { email, password: PASSWORD },
  });
  return a.status === 200 && typeof a.body?.token === "string"
    ? a.body.token
    : null;
}

function markRevoked(token: string, a: Answer, how: string): void {
  revoked.set(token, { phase, at: a.answered, by: a.instance, how });
}

/** The mixed traffic of one client, until `until.stopped`. */
async function mixedClient(
  w: number,
  proxy: Target,
  pool: string[],
  notePath: string,
  until: { stopped: boolean },
): Promise<void> {
  let n = 0;
  while (!until.stopped) {
    const email = pool[(w + n++ * connections) % pool.length];
    const token = await login(proxy, email);
    if (token === null) {
      await sleep(50);
      continue;
    }
    for (let k = 0; k < READS_PER_SESSION && !until.stopped; k++) {
      if (k % 2) await send("me", proxy, "/api/me", { token });
      else await send("note", proxy, notePath, { token });
    }
    const out = await send("logout", proxy, "/logout", {
      method: "POST",
      token,
      json: {},
    });
    if (out.status === 204) markRevoked(token, out, "logout (mixed traffic)");
    else await sleep(50);
    // The proxy picks the instance: often not the one that signed out.
    await send("note", proxy, notePath, { token });
  }
}

/** One directed revocation, made through `instances[round % 3]`. */
async function revocationCheck(
  how: Kind,
  round: number,
  email: string,
  instances: Instance[],
  notePath: string,
  stale: boolean,
): Promise<void> {
  const by = instances[round % instances.length];
  const tokens: string[] = [];
  for (const inst of instances) {
    const token = await login(inst, email);
    if (token === null) {
      problems.push(`${phase} ${how}: sign-in on ${inst.name} failed`);
      return;
    }
    tokens.push(token);
  }
  // Every session read on every instance: with staleness, each instance
  // now remembers "not revoked" for each of them.
  const warm = await Promise.all(
    tokens.flatMap((token) =>
      instances.map((inst) => send("note", inst, notePath, { token }))
    ),
  );
  if (warm.some((a) => a.status !== 200)) {
    problems.push(`${phase} ${how}: a fresh session was refused before`);
  }
  const own = tokens[round % instances.length];
  let a: Answer;
  let ok: boolean;
  switch (how) {
    case "logout":
      a = await send("logout", by, "/logout", {
        method: "POST",
        token: own,
        json: {},
      });
      ok = a.status === 204;
      break;
    case "revokeAll":
      a = await send("revokeAll", by, "/account/sessions/revoke-others", {
        method: "POST",
        token: own,
        json: {},
      });
      ok = a.status === 200;
      break;
    case "password":
      a = await send("password", by, "/account/password", {
        method: "POST",
        token: own,
        json: { currentPassword: PASSWORD, newPassword: NEW_PASSWORD },
      });
      ok = a.status === 200;
      break;
    case "delete":
      a = await send("delete", by, "/account/delete", {
        method: "POST",
        token: own,
        json: { password: PASSWORD },
      });
      ok = a.status === 204;
      break;
  }
  if (!ok) {
    problems.push(`${phase} ${how} through ${by.name} answered ${a.status}`);
    return;
  }
  const gone = how === "logout" ? [own] : tokens;
  for (const token of gone) markRevoked(token, a, how);
  const giveUpAt = a.answered + (stale ? stalenessSeconds * 1000 + 1500 : 1500);
  const pending = new Set(
    gone.flatMap((token) => instances.map((inst) => ({ token, inst }))),
  );
  let lastAccepted = a.answered;
  while (pending.size > 0 && now() < giveUpAt) {
    await Promise.all([...pending].map(async (p) => {
      const r = await send("note", p.inst, notePath, { token: p.token });
      if (r.status === 401) pending.delete(p);
      else if (r.status === 200) lastAccepted = r.answered;
    }));
    if (pending.size > 0) await sleep(stale ? 50 : 20);
  }
  checks.push({
    phase,
    how,
    by: by.name,
    allRefusedMs: lastAccepted - a.answered,
    neverRefused: pending.size,
  });
}

/** Registration race: one email through every instance at once. */
async function registrationRace(
  instances: Instance[],
  db: SharedDatabase,
): Promise<
  { rounds: number; exact: number; statuses: Record<number, number> }
> {
  const statuses: Record<number, number> = {};
  let exact = 0;
  for (let r = 0; r < races; r++) {
    const email = `race-${r}-${crypto.randomUUID().slice(0, 8)}@bench.example`;
    const answers = await Promise.all(
      instances.map((inst) =>
        send("register", inst, "/register", {
          method: "POST",
          json: { email, password: PASSWORD },
        })
      ),
    );
    for (const a of answers) statuses[a.status] = (statuses[a.status] ?? 0) + 1;
    const created = answers.filter((a) => a.status === 201).length;
    const taken = answers.filter((a) => a.status === 409).length;
    const rows = await db.countUsers(email);
    if (created === 1 && taken === instances.length - 1 && rows === 1) exact++;
    else {
      problems.push(
        `race ${r}: ${created} created, ${taken} taken, ${rows} rows`,
      );
    }
  }
  return { rounds: races, exact, statuses };
}

/** Counts keys matching a pattern on one node (SCAN through redis-cli). */
async function countKeys(port: number, pattern: string): Promise<number> {
  const out = await new Deno.Command("redis-cli", {
    args: ["-p", String(port), "--scan", "--pattern", pattern],
    stdout: "piped",
    stderr: "null",
  }).output();
  return new TextDecoder().decode(out.stdout).split("\n").filter(Boolean)
    .length;
}

/** What the failover saw. */
interface Failover {
  victimPort: number;
  denyKeysOnVictim: number;
  killAt: number;
  promotedAfterMs: number | null;
  end: number;
  revokedProbes: number;
}

/** Signs out sessions, then kills the primary holding most denylist keys. */
async function failover(
  cluster: PrivateCluster,
  proxy: Target,
  pool: string[],
  notePath: string,
): Promise<Failover> {
  const doomed: string[] = [];
  for (let i = 0; i < FAILOVER_TOKENS; i++) {
    const token = await login(proxy, pool[i % pool.length]);
    if (token === null) continue;
    const a = await send("logout", proxy, "/logout", {
      method: "POST",
      token,
      json: {},
    });
    if (a.status === 204) {
      markRevoked(token, a, "logout before the failover");
      doomed.push(token);
    }
  }
  if (doomed.length < FAILOVER_TOKENS) {
    problems.push(
      `failover: only ${doomed.length} of ${FAILOVER_TOKENS} sessions signed out`,
    );
  }
  await sleep(1000); // replication to the replicas
  const primaries: PrivateRedis[] = [];
  for (const n of cluster.nodes) {
    if (
      (await rawCommand(n.port, "INFO replication")).includes("role:master")
    ) {
      primaries.push(n);
    }
  }
  const counts = await Promise.all(
    primaries.map((n) => countKeys(n.port, "bench:portcullis:deny:*")),
  );
  const v = counts.indexOf(Math.max(...counts));
  const victim = primaries[v];
  const victimId = (await rawCommand(victim.port, "CLUSTER MYID"))
    .split("\r\n")[1];
  const replicaLine = (await rawCommand(victim.port, "CLUSTER NODES"))
    .split("\n").find((l) => l.split(" ")[3] === victimId);
  const replicaPort = Number(
    replicaLine?.split(" ")[1].split("@")[0].split(":")[1],
  );
  let probing = true;
  let revokedProbes = 0;
  const prober = (async () => {
    for (let i = 0; probing; i++) {
      await send("note", proxy, notePath, {
        token: doomed[i % doomed.length],
      });
      revokedProbes++;
    }
  })();
  const killAt = now();
  await victim.kill();
  console.error(
    `killed the primary on ${victim.port} (${counts[v]} denylist keys) at ${
      (killAt / 1000).toFixed(1)
    } s`,
  );
  let promotedAfterMs: number | null = null;
  while (now() < killAt + afterKillSeconds * 1000) {
    if (promotedAfterMs === null && replicaPort > 0) {
      try {
        const info = await rawCommand(replicaPort, "INFO replication");
        if (info.includes("role:master")) promotedAfterMs = now() - killAt;
      } catch { /* ask again */ }
    }
    await sleep(100);
  }
  probing = false;
  await prober;
  return {
    victimPort: victim.port,
    denyKeysOnVictim: counts[v],
    killAt,
    promotedAfterMs,
    end: now(),
    revokedProbes,
  };
}

/** One phase: fresh instances, mixed load, directed checks. */
async function runPhase(
  name: string,
  cluster: PrivateCluster,
  db: SharedDatabase,
  users: { pool: string[]; directed: string[]; noteOwner: string },
  staleness: number | undefined,
): Promise<
  { race?: Awaited<ReturnType<typeof registrationRace>>; failover?: Failover }
> {
  phase = name;
  const deployment: Deployment = await startDeployment({
    redisPorts: cluster.nodes.map((n) => n.port),
    schema: db.schema,
    revocationStaleness: staleness,
    deadlineMs,
  });
  cleanups.push(() => deployment.stop());
  const out: {
    race?: Awaited<ReturnType<typeof registrationRace>>;
    failover?: Failover;
  } = {};
  try {
    const proxy = { name: "proxy", origin: deployment.origin };
    const ownerToken = await login(proxy, users.noteOwner);
    const note = ownerToken === null
      ? null
      : await send("createNote", proxy, "/api/notes", {
        method: "POST",
        token: ownerToken,
        json: { text: "readable by every signed-in user" },
      });
    if (note?.status !== 201) {
      throw new Error("could not create the shared note");
    }
    const notePath = `/api/notes/${note.body.id}`;
    const until = { stopped: false };
    const load = Promise.all(
      Array.from(
        { length: connections },
        (_, w) => mixedClient(w, proxy, users.pool, notePath, until),
      ),
    );
    try {
      await sleep(2000);
      for (const how of KINDS) {
        for (let r = 0; r < rounds; r++) {
          await revocationCheck(
            how,
            r,
            users.directed.pop()!,
            deployment.instances,
            notePath,
            staleness !== undefined,
          );
        }
      }
      if (staleness === undefined) {
        out.race = await registrationRace(deployment.instances, db);
        out.failover = await failover(cluster, proxy, users.pool, notePath);
      } else {
        await sleep(2000);
      }
    } finally {
      until.stopped = true;
      await load;
    }
  } finally {
    await deployment.stop();
    cleanups.pop();
  }
  return out;
}

const cleanups: (() => Promise<void>)[] = [];
async function cleanUp(): Promise<void> {
  while (cleanups.length > 0) {
    try {
      await cleanups.pop()!();
    } catch (error) {
      console.error(`cleanup: ${(error as Error).message}`);
    }
  }
}
const onSignal = async () => {
  await cleanUp();
  Deno.exit(130);
};
Deno.addSignalListener("SIGINT", onSignal);
Deno.addSignalListener("SIGTERM", onSignal);

// ---------------------------------------------------------------------------

if (!(await requireRedisBinaries())) Deno.exit(1);
const loadAtStart = Deno.loadavg();
const pool = Array.from(
  { length: 100 },
  (_, i) => `pool-${i}@bench.example`,
);
const directed = Array.from(
  { length: 2 * KINDS.length * rounds },
  (_, i) => `directed-${i}@bench.example`,
);
const noteOwner = "owner@bench.example";
let exact: Awaited<ReturnType<typeof runPhase>> | undefined;
let failed: unknown;
const loadSamples: number[][] = [];
const loadTimer = setInterval(() => loadSamples.push(Deno.loadavg()), 5000);
try {
  const cluster = await startRedisCluster(3, 1);
  cleanups.push(() => cluster.stop());
  console.error(
    `Redis Cluster on ${cluster.nodes.map((n) => n.port).join(", ")}`,
  );
  const db = await openSharedDatabase(
    [...pool, ...directed, noteOwner],
    PASSWORD,
  );
  cleanups.push(() => db.drop());
  console.error(`credential database: schema ${db.schema}`);
  const users = { pool, directed: [...directed], noteOwner };
  await runPhase("stale", cluster, db, users, stalenessSeconds);
  exact = await runPhase("exact", cluster, db, users, undefined);
} catch (error) {
  failed = error;
  console.error(`run failed: ${(error as Error)?.stack ?? error}`);
} finally {
  clearInterval(loadTimer);
  client.close();
  await cleanUp();
}

// ---------------------------------------------------------------------------

const ms = (x: number) => x.toFixed(0);
/** The largest of many numbers (no spread: the lists are long). */
const maxOf = (l: number[]) => l.reduce((m, x) => Math.max(m, x), 0);
/** "kind n, kind n" of some samples. */
function byKind(s: Sample[]): string {
  const kinds: Record<string, number> = {};
  for (const x of s) kinds[x.kind] = (kinds[x.kind] ?? 0) + 1;
  return Object.entries(kinds).map(([k, n]) => `${k} ${n}`).join(", ");
}
/** "status: n, status: n" of some samples (0: a network error). */
function byStatus(s: Sample[]): string {
  const statuses: Record<number, number> = {};
  for (const x of s) statuses[x.status] = (statuses[x.status] ?? 0) + 1;
  return Object.entries(statuses).map(([k, n]) => `${k}: ${n}`).join(", ");
}
const latencies = (s: Sample[]) => s.map((x) => x.answered - x.sent);
const row = (cells: (string | number)[]) =>
  console.log(`| ${cells.join(" | ")} |`);

console.log(
  `\n## Three instances on one Redis Cluster (${
    new Date().toISOString().slice(0, 16)
  }Z)\n`,
);
const loads = loadSamples.map((l) => l[0]);
console.log(
  `${navigator.hardwareConcurrency} cores shared; load average (1 min) at the start ${
    loadAtStart[0].toFixed(2)
  }, during the run ${Math.min(...loads).toFixed(2)}–${
    Math.max(...loads).toFixed(2)
  }; Deno ${Deno.version.deno}; ${connections} mixed-traffic clients; deadline ${deadlineMs} ms + ${slackMs} ms slack.\n`,
);

console.log("### Traffic per phase\n");
row([
  "phase",
  "requests",
  "by kind",
  "statuses",
  "p50 / p99 / max ms",
  `> ${deadlineMs + slackMs} ms`,
]);
row(["---", "---", "---", "---", "---", "---"]);
for (const p of ["stale", "exact"]) {
  const s = samples.filter((x) => x.phase === p);
  const l = latencies(s);
  row([
    p,
    s.length,
    byKind(s),
    byStatus(s),
    `${ms(percentile(l, 50))} / ${ms(percentile(l, 99))} / ${ms(maxOf(l))}`,
    l.filter((x) => x > deadlineMs + slackMs).length,
  ]);
}

console.log("\n### Revocation through one instance, read on all three\n");
row([
  "phase",
  "revocation",
  "revocations (sessions revoked)",
  "reads of the revoked sessions after it",
  "200s after it, same instance",
  "200s after it, other instances",
  "longest a revoked session still answered 200 (ms)",
  "until every instance refused it (max ms)",
  "never refused",
]);
row(["---", "---", "---", "---", "---", "---", "---", "---", "---"]);
const hows = [
  ...KINDS,
  "logout (mixed traffic)",
  "logout before the failover",
] as string[];
for (const p of ["stale", "exact"]) {
  for (const how of hows) {
    const sessions = [...revoked.values()].filter((r) =>
      r.phase === p && r.how === how
    ).length;
    if (sessions === 0) continue;
    const c = checks.filter((x) => x.phase === p && x.how === how);
    const l = late.filter((x) => x.phase === p && x.how === how);
    row([
      p,
      how,
      c.length ? `${c.length} (${sessions})` : `${sessions} (${sessions})`,
      revokedReads.get(`${p}|${how}`) ?? 0,
      l.filter((x) => x.instance === x.by).length,
      l.filter((x) => x.instance !== x.by).length,
      l.length ? ms(maxOf(l.map((x) => x.delayMs))) : "none",
      c.length ? ms(maxOf(c.map((x) => x.allRefusedMs))) : "",
      c.length ? c.reduce((n, x) => n + x.neverRefused, 0) : "",
    ]);
  }
}

if (exact?.race) {
  const r = exact.race;
  console.log("\n### Registration race (exact phase)\n");
  row(["rounds", "rounds with one 201, two 409 and one row", "statuses"]);
  row(["---", "---", "---"]);
  row([
    r.rounds,
    r.exact,
    Object.entries(r.statuses).map(([k, n]) => `${k}: ${n}`).join(", "),
  ]);
}

const f = exact?.failover;
let failoverSlow = 0;
if (f) {
  const during = samples.filter((s) =>
    s.phase === "exact" && s.sent >= f.killAt && s.sent < f.end
  );
  const l = latencies(during);
  const n503 = during.filter((s) => s.status === 503);
  failoverSlow = l.filter((x) => x > deadlineMs + slackMs).length;
  const lastBad = n503.reduce((m, s) => Math.max(m, s.answered), f.killAt);
  console.log(
    "\n### Failover: SIGKILL of one primary under load (exact phase)\n",
  );
  row(["measure", "value"]);
  row(["---", "---"]);
  row([
    "killed primary (port) / denylist keys on it",
    `${f.victimPort} / ${f.denyKeysOnVictim}`,
  ]);
  row([
    "its replica answered role:master after (ms)",
    f.promotedAfterMs === null ? "not seen" : ms(f.promotedAfterMs),
  ]);
  row([
    "requests sent in the " + afterKillSeconds + " s after the kill",
    during.length,
  ]);
  row(["of which reads with signed-out sessions", f.revokedProbes]);
  row(["statuses", byStatus(during)]);
  row(["503s", n503.length]);
  row([
    "500s, by request (the contract says 503 when a store cannot be reached)",
    byKind(during.filter((s) => s.status === 500)) || "0",
  ]);
  row([
    "last 503 answered after the kill (ms)",
    n503.length ? ms(lastBad - f.killAt) : "none",
  ]);
  row([
    "latency p50 / p99 / max (ms)",
    `${ms(percentile(l, 50))} / ${ms(percentile(l, 99))} / ${ms(maxOf(l))}`,
  ]);
  row([
    `answers slower than ${deadlineMs} + ${slackMs} ms (must be 0)`,
    failoverSlow,
  ]);
  row([
    "protected 200s for revoked sessions (must be 0)",
    late.filter((x) =>
      x.phase === "exact" && x.how === "logout before the failover"
    ).length,
  ]);
}

const bound = stalenessSeconds * 1000;
const slowAll =
  samples.filter((s) => s.answered - s.sent > deadlineMs + slackMs).length;
const other5xx =
  samples.filter((s) => s.status === 0 || (s.status >= 500 && s.status !== 503))
    .length;
const staleLate = late.filter((x) => x.phase === "stale");
const mustBeZero: [string, number][] = [
  [
    "exact: protected 200s for a revoked session, any instance (failover included)",
    late.filter((x) => x.phase === "exact").length,
  ],
  [
    "stale: protected 200s for a revoked session on the revoking instance",
    staleLate.filter((x) => x.instance === x.by).length,
  ],
  [
    `stale: protected 200s for a revoked session later than the ${bound} ms bound`,
    staleLate.filter((x) => x.delayMs > bound).length,
  ],
  [
    "revoked sessions still accepted when the probing gave up",
    checks.reduce((n, c) => n + c.neverRefused, 0),
  ],
  [
    "registration rounds without exactly one account",
    exact?.race ? exact.race.rounds - exact.race.exact : races,
  ],
  [`answers slower than ${deadlineMs} + ${slackMs} ms (both phases)`, slowAll],
  ["5xx other than 503, and network errors", other5xx],
  [
    "directed checks that could not run, or a failed run",
    problems.length + (failed ? 1 : 0) + (f ? 0 : 1),
  ],
];
console.log("\n### Must be 0\n");
row(["figure", "value"]);
row(["---", "---"]);
for (const [what, n] of mustBeZero) row([what, n === 0 ? "0" : `**${n}**`]);
for (const p of problems) console.log(`- ${p}`);
const errors = samples.filter((s) =>
  s.status === 0 || (s.status >= 500 && s.status !== 503)
);
for (const p of ["stale", "exact"]) {
  const e = errors.filter((s) => s.phase === p);
  if (e.length > 0) {
    console.log(
      `- ${p}: 5xx other than 503 or network errors: ${byKind(e)} (statuses ${
        [...new Set(e.map((s) => s.status))].join(", ")
      })`,
    );
  }
}
const bad = mustBeZero.some(([, n]) => n !== 0);
console.log(
  bad
    ? "\nFAILED: a must-be-0 figure is not 0"
    : "\nOK: every must-be-0 figure is 0",
);
Deno.exit(bad ? 1 : 0);
