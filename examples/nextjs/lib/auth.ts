// The Node side: sessions with their revocation store, users, notes and the
// note policy, built once per server process. Route handlers, pages and
// server actions import this file; middleware.ts (edge runtime) does not.
import { headers } from "next/headers";
import {
  definePolicy,
  identityMiddleware,
  KVSessionStore,
  MemoryCredentialStore,
  MemoryKV,
  PasswordAuthenticator,
  SecretProvider,
  SessionManager,
} from "@portcullis/auth";
import { LoginThrottle } from "@portcullis/auth/throttle";
import { nextAuth } from "@portcullis/next";

export const appOrigin = process.env.APP_ORIGIN ?? "http://localhost:3000";

/** A note belongs to the user who wrote it. */
export interface Note {
  id: string;
  owner: string;
  text: string;
}

function build() {
  // In memory: one `next start` process. For several processes, use a
  // shared store (@portcullis/sql for users, @portcullis/redis or
  // @portcullis/libsql-kv for the revocation list).
  const kv = new MemoryKV();
  const sessions = new SessionManager({
    secret: SecretProvider.fromValue(process.env.AUTH_SECRET ?? ""),
    store: new KVSessionStore(kv),
  });
  const credentials = new MemoryCredentialStore();
  return {
    sessions,
    credentials,
    passwords: new PasswordAuthenticator({
      credentials,
      throttle: new LoginThrottle({ store: kv }),
      revokeSessions: (subject) => sessions.revokeAll(subject),
    }),
    notes: new Map<string, Note>(),
  };
}

// Next may load this module once per bundle layer (route handlers, server
// components and actions are compiled separately): one instance per process.
const shared = globalThis as { __portcullis?: ReturnType<typeof build> };
const state = (shared.__portcullis ??= build());

export const { sessions, credentials, passwords, notes } = state;

/** Identity for route handlers (`auth.route`), components and actions. */
export const auth = nextAuth(
  identityMiddleware(sessions, { crossOrigin: { appOrigin } }),
  { headers, appOrigin },
);

/** Only a note's owner may read it. */
export const notePolicy = definePolicy<"read">({
  can: (who, _action, id) => who !== null && notes.get(id)?.owner === who.id,
});
