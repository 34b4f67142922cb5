// Shared fixtures for session-layer tests.
import {
  KVSessionStore,
  MemoryKV,
  SecretProvider,
  SessionManager,
} from "../../mod.ts";
import type { SessionManagerOptions } from "../../lib/session/mod.ts";

export const SECRET = "2CfJ4Z1xPNTmdOfwXz46CNaE1hL23uCU4bjYaqqzE88=";
export const OLD_SECRET = "mkMU7+6aPVFbBPZUVjswSPMsTzzOZNY824+RQ2PBI1w=";

/** A mutable clock in unix milliseconds. */
export class Clock {
  constructor(public ms = Date.UTC(2026, 0, 1)) {}
  now = (): number => this.ms;
  advance(seconds: number): void {
    this.ms += seconds * 1000;
  }
}

export function makeManager(
  overrides: Partial<SessionManagerOptions> = {},
): { sessions: SessionManager; clock: Clock; kv: MemoryKV } {
  const clock = new Clock();
  const kv = new MemoryKV({ now: clock.now });
  const sessions = new SessionManager({
    secret: SecretProvider.fromValue(SECRET),
    store: new KVSessionStore(kv),
    now: clock.now,
    ...overrides,
  });
  return { sessions, clock, kv };
}

export function decodePayload(token: string): string {
  const part = token.split(".")[2];
  const b64 = part.replace(/-/g, "+").replace(/_/g, "/");
  return new TextDecoder().decode(
    Uint8Array.from(
      atob(b64 + "=".repeat((4 - b64.length % 4) % 4)),
      (c) => c.charCodeAt(0),
    ),
  );
}
