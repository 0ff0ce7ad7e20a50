import type Database from "better-sqlite3";
import type { AuditEntry } from "../records.js";

/** Record an operator action that changes what clients are served. Never holds secrets. */
export function recordAudit(db: Database.Database, entry: Omit<AuditEntry, "at">): void {
  db.prepare("INSERT INTO audit_log (actor, action, subject, details) VALUES (?, ?, ?, ?)").run(entry.actor, entry.action, entry.subject, JSON.stringify(entry.details));
}

export function listAudit(db: Database.Database, limit = 100): AuditEntry[] {
  const rows = db.prepare("SELECT at, actor, action, subject, details FROM audit_log ORDER BY id DESC LIMIT ?").all(limit) as Array<Omit<AuditEntry, "details"> & { details: string }>;
  return rows.map((r) => ({ ...r, details: JSON.parse(r.details) as Record<string, unknown> }));
}
