// Issue 27, "CPU by hashing": the bound on concurrent password hashes,
// its queue, its reserve for trusted-device requests and their priority.
import assert from "node:assert/strict";
import { HashingGate } from "../../packages/accounts/mod.ts";

Deno.test("HashingGate runs at most concurrency - reserved anonymous hashes, queues `queue` more and refuses the rest", async () => {
  const gate = new HashingGate({ concurrency: 3, reserved: 1, queue: 2 });
  const a = await gate.acquire(false);
  const b = await gate.acquire(false);
  assert.ok(a && b);
  assert.equal(gate.running, 2);
  const queued = [gate.acquire(false), gate.acquire(false)];
  assert.equal(gate.waiting, 2);
  assert.equal(gate.admits(false), false);
  assert.equal(await gate.acquire(false), null, "the queue is full");
  // The reserved slot is the trusted requests' alone.
  assert.equal(gate.admits(true), true);
  const t = await gate.acquire(true);
  assert.ok(t);
  assert.equal(gate.running, 3);
  a();
  a(); // a second release changes nothing
  // Two running (b and the trusted one): anonymous requests still have
  // only concurrency - reserved slots, so the queue waits.
  assert.equal(gate.running, 2);
  assert.equal(gate.waiting, 2);
  t();
  const c = await queued[0];
  assert.ok(c);
  assert.equal(gate.running, 2);
  assert.equal(gate.waiting, 1);
  b!();
  const d = await queued[1];
  assert.ok(d);
  c!();
  d!();
  assert.equal(gate.running, 0);
  assert.equal(gate.waiting, 0);
});

Deno.test("HashingGate serves trusted-device requests before anonymous ones that waited longer, taking turns with them beyond the reserve", async () => {
  const gate = new HashingGate({ concurrency: 1, reserved: 0, queue: 8 });
  const order: string[] = [];
  const first = await gate.acquire(false);
  const waiters = [
    ["anonymous 1", false],
    ["anonymous 2", false],
    ["trusted 1", true],
    ["anonymous 3", false],
    ["trusted 2", true],
  ].map(async ([name, trusted]) => {
    const release = await gate.acquire(trusted as boolean);
    order.push(name as string);
    await Promise.resolve();
    release!();
  });
  assert.equal(gate.waiting, 5);
  first!();
  await Promise.all(waiters);
  // No reserve here: the first trusted request goes first, and having
  // taken a slot anonymous ones waited for, hands the next to them.
  assert.deepEqual(order, [
    "trusted 1",
    "anonymous 1",
    "trusted 2",
    "anonymous 2",
    "anonymous 3",
  ]);
});

Deno.test("HashingGate refuses settings that make no sense, naming them", () => {
  assert.throws(() => new HashingGate({ concurrency: 0 }), /concurrency/);
  assert.throws(() => new HashingGate({ concurrency: 1.5 }), /concurrency/);
  assert.throws(
    () => new HashingGate({ concurrency: 2, reserved: 2 }),
    /^RangeError: hashing\.reserved must be a whole number from 0 to concurrency - 1 \(1\): received 2$/,
  );
  assert.throws(() => new HashingGate({ queue: -1 }), /queue/);
  const gate = new HashingGate();
  assert.ok(gate.admits(false));
});

Deno.test("HashingGate's trusted lane is fair between accounts: one place per account, the account served longest ago first, and a full queue makes room for it (outside review: five attacker accounts with their own device cookies shut the owner out)", async () => {
  const gate = new HashingGate({ concurrency: 2, reserved: 1, queue: 2 });
  // Two attacker accounts signed in with their own device cookies.
  const r1 = await gate.acquire(true, "a1");
  const r2 = await gate.acquire(true, "a2");
  assert.ok(r1 && r2);
  r1();
  r2();
  // Two more hold both slots; a1 and a2, served lately, wait again.
  const h1 = await gate.acquire(true, "x1");
  const h2 = await gate.acquire(true, "x2");
  assert.ok(h1 && h2);
  const w1 = gate.acquire(true, "a1");
  const w2 = gate.acquire(true, "a2");
  // A second request of a1 takes no second trusted place, and is not
  // moved to the anonymous lane either (its device cookie skipped the
  // per-address limits): refused at once.
  assert.equal(gate.admits(true, "a1"), false);
  assert.equal(await gate.acquire(true, "a1"), null);
  const extra = gate.acquire(false);
  assert.equal(gate.waiting, 3);
  assert.equal(gate.admits(true, "x1"), false, "x1 is running: refused");
  // The owner, not served lately, takes the place of the account served
  // last (a2), which is refused at once.
  assert.equal(gate.admits(true, "owner"), true);
  const owner = gate.acquire(true, "owner");
  assert.equal(await w2, null);
  h1();
  const served = await owner;
  assert.ok(served, "the owner is served first");
  h2();
  // The owner took a slot beyond the reserve while the anonymous lane
  // waited: the next one is that lane's.
  const last = await extra;
  assert.ok(last, "then the anonymous lane's turn");
  served();
  const a1 = await w1;
  assert.ok(a1, "then the account served longest ago");
  a1();
  last();
  assert.equal(gate.running, 0);
  assert.equal(gate.waiting, 0);
});

Deno.test("HashingGate: trusted requests of many accounts cannot starve the anonymous lane; an anonymous request never starts beside a lone trusted one (outside review: four accounts of an attacker's own shut out every registration)", async () => {
  const gate = new HashingGate({ concurrency: 2, reserved: 1, queue: 16 });
  const started: string[] = [];
  const running = new Set<() => void>();
  let next = 0;
  // The attacker: a trusted request of a fresh account is always waiting.
  const trusted = () => {
    const name = `t${next++}`;
    gate.acquire(true, name).then((release) => {
      if (release === null) return;
      started.push(name);
      running.add(release);
    });
  };
  for (let i = 0; i < 4; i++) trusted();
  await Promise.resolve();
  assert.equal(gate.running, 2, "the trusted requests fill both slots");
  const anonymous = [1, 2, 3].map((i) =>
    gate.acquire(false).then((release) => {
      started.push(`a${i}`);
      running.add(release!);
    })
  );
  // Hashes end one at a time; each ending lets a new trusted request in.
  for (let round = 0; round < 12; round++) {
    const [first] = running;
    running.delete(first);
    first();
    trusted();
    await new Promise((r) => setTimeout(r, 0));
  }
  await Promise.all(anonymous);
  const served = started.filter((s) => s.startsWith("a"));
  assert.deepEqual(served, ["a1", "a2", "a3"]);
  // Turns: never more than two trusted starts in a row while they waited.
  const firstAnonymous = started.indexOf("a1");
  assert.ok(firstAnonymous <= 3, `a1 started at ${firstAnonymous}`);
  for (const release of running) release();

  // Only the owner is trusted; the anonymous flood keeps its one slot and
  // starts nothing beside the owner's hash once its own ends.
  const quiet = new HashingGate({ concurrency: 2, reserved: 1, queue: 16 });
  const flood = await quiet.acquire(false);
  const waiting = quiet.acquire(false);
  const owner = await quiet.acquire(true, "owner");
  assert.ok(flood && owner);
  flood();
  assert.equal(quiet.running, 1, "the owner's hash runs alone");
  owner();
  const after = await waiting;
  assert.ok(after);
  after();
});

Deno.test("HashingGate.enter takes a slot or a place at once, and cancel gives it up: a waiting place leaves the queue (the next request gets it), a slot is released, and a trusted account's place is free again (fifth outside review: a sign-in counted, then refused, because others took the place while it was counted)", async () => {
  const gate = new HashingGate({ concurrency: 2, reserved: 1, queue: 1 });
  // The anonymous slot, then its one place in the queue.
  const running = gate.enter(false)!;
  const first = await running.ready;
  assert.ok(first);
  const waiting = gate.enter(false)!;
  assert.ok(waiting, "the queue's place");
  assert.equal(gate.enter(false), null, "no place left: refused at once");
  assert.equal(gate.waiting, 1);
  // Given up: it leaves the queue, its ready answers null, and the next
  // request takes the place.
  waiting.cancel();
  assert.equal(gate.waiting, 0);
  assert.equal(await waiting.ready, null);
  const next = gate.enter(false)!;
  assert.ok(next);
  first();
  const nextRelease = await next.ready;
  assert.ok(nextRelease, "served once the slot is free");
  assert.equal(gate.running, 1);
  // Cancelling a ticket that holds a slot releases it.
  next.cancel();
  assert.equal(gate.running, 0);
  next.cancel(); // twice: nothing more
  nextRelease(); // its release too: nothing more
  assert.equal(gate.running, 0);

  // A trusted account's place: given up, the account may enter again, and
  // an anonymous request waiting behind it starts.
  const busy = new HashingGate({ concurrency: 2, reserved: 1, queue: 2 });
  const a = (await busy.acquire(false))!;
  const t = (await busy.acquire(true, "owner@example.com"))!;
  const owner = busy.enter(true, "other@example.com")!;
  assert.equal(busy.enter(true, "other@example.com"), null, "one per account");
  const anonymous = busy.enter(false)!;
  owner.cancel();
  assert.equal(await owner.ready, null);
  const again = busy.enter(true, "other@example.com");
  assert.ok(again, "the account's place is free again");
  again.cancel();
  a();
  t();
  const anonymousRelease = await anonymous.ready;
  assert.ok(anonymousRelease, "the anonymous request started");
  // A slot given and cancelled before the caller read it is released.
  const late = busy.enter(false)!;
  assert.equal(busy.waiting, 1);
  anonymousRelease(); // the slot goes to `late`…
  late.cancel(); // …which gives it up before reading it
  assert.equal(await late.ready, null);
  assert.equal(busy.running, 0);
  assert.equal(busy.waiting, 0);
});
