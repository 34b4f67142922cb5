/**
 * A database as 0.2.0 made it: the pinned SQL of tests/fixtures/sql_0_2_0/
 * and rows in every table, including the orphan credentials 0.2.0's
 * account deletion left behind (user "ghost").
 *
 * @module
 */
import type { SQLDialect } from "../../stores/sql/mod.ts";

/** The pinned 0.2.0 statements of a dialect (files 0001–0003). */
export async function schema020(dialect: SQLDialect): Promise<string[]> {
  const out: string[] = [];
  for (const file of ["0001_init", "0002_lifecycle", "0003_signin"]) {
    const text = await Deno.readTextFile(
      new URL(
        `../fixtures/sql_0_2_0/${file}.${dialect}.sql`,
        import.meta.url,
      ),
    );
    out.push(
      ...text.split("\n").filter((l) => !l.startsWith("--")).join("\n")
        .split(/;\s*\n/).map((s) => s.trim().replace(/;$/, "")).filter(
          Boolean,
        ),
    );
  }
  return out;
}

/** Rows in every table, and orphans of a user 0.2.0 deleted ("ghost"). */
export const SEED: string[] = [
  "INSERT INTO users (id, email, password_hash, verified_at, created_at) VALUES ('u1', 'one@example.com', '$pbkdf2-sha256$i=600000$a$b', 1700000000001, 1690000000001)",
  "INSERT INTO users (id, email, password_hash, verified_at, created_at) VALUES ('u2', 'josé@example.com', '$2b$10$x', 0, 1690000000002)",
  "INSERT INTO verification_tokens (token_hash, purpose, subject, email, expires_at, created_at) VALUES ('th1', 'verify-email', 'u2', 'josé@example.com', 1790000000000, 1690000000003)",
  "INSERT INTO verification_tokens (token_hash, purpose, subject, email, expires_at, created_at) VALUES ('th2', 'webauthn-challenge', 'th2', '', 1790000000000, 1690000000004)",
  "INSERT INTO auth_events (id, subject, type, at, user_agent) VALUES ('e1', 'u1', 'login', 1690000000005, 'Mozilla/5.0')",
  "INSERT INTO auth_events (id, subject, type, at, user_agent) VALUES ('e2', 'ghost', 'account_deleted', 1690000000006, NULL)",
  "INSERT INTO identities (provider, provider_subject, user_id, email, created_at) VALUES ('op', 'sub-1', 'u1', 'one@example.com', 1690000000007)",
  "INSERT INTO identities (provider, provider_subject, user_id, email, created_at) VALUES ('op', 'sub-2', 'u2', 'josé@example.com', 1690000000008)",
  "INSERT INTO identities (provider, provider_subject, user_id, email, created_at) VALUES ('op', 'sub-ghost', 'ghost', 'ghost@example.com', 1690000000009)",
  "INSERT INTO passkeys (credential_id, user_id, public_key, counter, transports, name, created_at, last_used_at) VALUES ('cred-1', 'u1', 'pk1', 7, 'internal,hybrid', 'Laptop', 1690000000010, 1690000000011)",
  "INSERT INTO passkeys (credential_id, user_id, public_key, counter, transports, name, created_at, last_used_at) VALUES ('cred-2', 'u2', 'pk2', 0, '', 'Phone', 1690000000012, 0)",
  "INSERT INTO passkeys (credential_id, user_id, public_key, counter, transports, name, created_at, last_used_at) VALUES ('cred-ghost', 'ghost', 'pk3', 1, '', 'Old', 1690000000013, 0)",
  "INSERT INTO totp_credentials (user_id, secret, enabled_at, last_step, created_at) VALUES ('u1', 'sealed-1', 1690000000014, 56333333, 1690000000015)",
  "INSERT INTO totp_credentials (user_id, secret, enabled_at, last_step, created_at) VALUES ('u2', 'sealed-2', 0, 0, 1690000000016)",
  "INSERT INTO totp_credentials (user_id, secret, enabled_at, last_step, created_at) VALUES ('ghost', 'sealed-3', 1, 1, 1690000000017)",
  "INSERT INTO recovery_codes (user_id, code_hash, created_at) VALUES ('u1', 'c1', 1690000000018)",
  "INSERT INTO recovery_codes (user_id, code_hash, created_at) VALUES ('u1', 'c2', 1690000000019)",
  "INSERT INTO recovery_codes (user_id, code_hash, created_at) VALUES ('u2', 'c3', 1690000000020)",
  "INSERT INTO recovery_codes (user_id, code_hash, created_at) VALUES ('ghost', 'c4', 1690000000021)",
];
