import { createHash, randomBytes } from "node:crypto";
import { LdsError } from "../../errors.js";
import type { Admin, AdminSession, SessionAdmin } from "../records.js";
import type { PgContext, Sql } from "./sql.js";
import { isUniqueViolation } from "./unique-violation.js";

// Usernames are unique and found whatever their case, as lds.db's `COLLATE NOCASE` column does (usernames are
// ASCII, so lower() folds them as NOCASE does); schema-accounts.ts indexes lower(username) for both.

export async function findAdmin(sql: Sql, username: string): Promise<Admin | undefined> {
  return sql.row<Admin>(`SELECT id, username, password_hash AS "passwordHash" FROM admins WHERE lower(username) = lower($1)`, [username]);
}

export async function countAdmins(sql: Sql): Promise<number> {
  return (await sql.row<{ n: number }>("SELECT count(*) AS n FROM admins"))!.n;
}

export async function insertAdmin(sql: Sql, username: string, passwordHash: string): Promise<number> {
  if (!/^[A-Za-z0-9._@-]{1,64}$/.test(username)) {
    throw new LdsError("validation_error", "A username is 1-64 letters, digits, dots, dashes, underscores or @.", {
      hint: "Choose another username.",
    });
  }
  try {
    return (await sql.row<{ id: number }>("INSERT INTO admins (username, password_hash) VALUES ($1, $2) RETURNING id", [username, passwordHash]))!.id;
  } catch (err) {
    if (isUniqueViolation(err)) throw new LdsError("validation_error", `An admin named ${username} already exists.`, { hint: "Choose another username." });
    throw err;
  }
}

/**
 * The first admin, only while there is none. The admins table is locked against inserts (not reads) for the
 * transaction: of two replicas starting at once, the second waits, then finds the first's admin (as first-team.ts).
 */
export async function insertFirstAdmin({ transaction }: PgContext, username: string, passwordHash: string): Promise<number | undefined> {
  return transaction(async (tx) => {
    await tx.run("LOCK TABLE admins IN SHARE ROW EXCLUSIVE MODE");
    return (await countAdmins(tx)) === 0 ? insertAdmin(tx, username, passwordHash) : undefined;
  });
}

const hashToken = (token: string) => createHash("sha256").update(token).digest("hex");

/** A new session: 32 random bytes for the cookie; only their SHA-256 is stored. */
export async function createSession(sql: Sql, adminId: number, ttlSeconds: number): Promise<AdminSession> {
  const token = randomBytes(32).toString("base64url");
  const expiresAt = new Date(Date.now() + ttlSeconds * 1000);
  await sql.run("DELETE FROM admin_sessions WHERE expires_at < $1", [new Date().toISOString()]);
  await sql.run("INSERT INTO admin_sessions (token_hash, admin_id, expires_at) VALUES ($1, $2, $3)", [hashToken(token), adminId, expiresAt.toISOString()]);
  return { token, expiresAt };
}

/** The admin a session token belongs to, or undefined when unknown or expired. */
export async function sessionAdmin(sql: Sql, token: string): Promise<SessionAdmin | undefined> {
  return sql.row<SessionAdmin>(
    `SELECT a.id, a.username FROM admin_sessions s JOIN admins a ON a.id = s.admin_id
     WHERE s.token_hash = $1 AND s.expires_at > $2`,
    [hashToken(token), new Date().toISOString()],
  );
}

export async function deleteSession(sql: Sql, token: string): Promise<void> {
  await sql.run("DELETE FROM admin_sessions WHERE token_hash = $1", [hashToken(token)]);
}
