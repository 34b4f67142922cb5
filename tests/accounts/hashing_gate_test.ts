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

Deno.test("HashingGate serves trusted-device requests before anonymous ones that waited longer", async () => {
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
  // A new anonymous request waits behind the trusted ones too.
  assert.equal(gate.waiting, 5);
  first!();
  await Promise.all(waiters);
  assert.deepEqual(order, [
    "trusted 1",
    "trusted 2",
    "anonymous 1",
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
