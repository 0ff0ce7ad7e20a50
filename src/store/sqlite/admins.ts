import { createHash, randomBytes } from "node:crypto";
import type Database from "better-sqlite3";
import { LdsError } from "../../errors.js";
import type { Admin, AdminSession, SessionAdmin } from "../records.js";

export function findAdmin(db: Database.Database, username: string): Admin | undefined {
  return db.prepare("SELECT id, username, password_hash AS passwordHash FROM admins WHERE username = ?").get(username) as Admin | undefined;
}

export function countAdmins(db: Database.Database): number {
  return db.prepare("SELECT count(*) FROM admins").pluck().get() as number;
}

export function insertAdmin(db: Database.Database, username: string, passwordHash: string): number {
  if (!/^[A-Za-z0-9._@-]{1,64}$/.test(username)) {
    throw new LdsError("validation_error", "A username is 1-64 letters, digits, dots, dashes, underscores or @.", {
      hint: "Choose another username.",
    });
  }
  try {
    return Number(db.prepare("INSERT INTO admins (username, password_hash) VALUES (?, ?)").run(username, passwordHash).lastInsertRowid);
  } catch (err) {
    if ((err as { code?: string }).code === "SQLITE_CONSTRAINT_UNIQUE") {
      throw new LdsError("validation_error", `An admin named ${username} already exists.`, { hint: "Choose another username." });
    }
    throw err;
  }
}

/** The first admin, only while there is none: one transaction, and SQLite has one writer at a time. */
export function insertFirstAdmin(db: Database.Database, username: string, passwordHash: string): number | undefined {
  return db.transaction(() => (countAdmins(db) === 0 ? insertAdmin(db, username, passwordHash) : undefined)).immediate();
}

const hashToken = (token: string) => createHash("sha256").update(token).digest("hex");

/** A new session: 32 random bytes for the cookie; only their SHA-256 is stored. */
export function createSession(db: Database.Database, adminId: number, ttlSeconds: number): AdminSession {
  const token = randomBytes(32).toString("base64url");
  const expiresAt = new Date(Date.now() + ttlSeconds * 1000);
  db.prepare("DELETE FROM admin_sessions WHERE expires_at < ?").run(new Date().toISOString());
  db.prepare("INSERT INTO admin_sessions (token_hash, admin_id, expires_at) VALUES (?, ?, ?)").run(hashToken(token), adminId, expiresAt.toISOString());
  return { token, expiresAt };
}

/** The admin a session token belongs to, or undefined when unknown or expired. */
export function sessionAdmin(db: Database.Database, token: string): SessionAdmin | undefined {
  return db
    .prepare(
      `SELECT a.id, a.username FROM admin_sessions s JOIN admins a ON a.id = s.admin_id
       WHERE s.token_hash = ? AND s.expires_at > ?`,
    )
    .get(hashToken(token), new Date().toISOString()) as SessionAdmin | undefined;
}

export function deleteSession(db: Database.Database, token: string): void {
  db.prepare("DELETE FROM admin_sessions WHERE token_hash = ?").run(hashToken(token));
}
