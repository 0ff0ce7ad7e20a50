import type Database from "better-sqlite3";
import type { LibraryVersion } from "../records.js";

export function libraryVersions(db: Database.Database, libraryId: string): LibraryVersion[] {
  return db.prepare("SELECT name, ref FROM library_versions WHERE library_id = ? ORDER BY name").all(libraryId) as LibraryVersion[];
}

/** The commit a version was last indexed at, or undefined for a version not indexed yet. */
export function versionCommit(db: Database.Database, libraryId: string, name: string): string | undefined {
  return db.prepare("SELECT commit_sha FROM library_versions WHERE library_id = ? AND name = ?").pluck().get(libraryId, name) as string | undefined;
}

export function recordVersion(db: Database.Database, libraryId: string, version: LibraryVersion & { commit: string }): void {
  db.prepare(
    `INSERT INTO library_versions (library_id, name, ref, commit_sha) VALUES (?, ?, ?, ?)
     ON CONFLICT(library_id, name) DO UPDATE SET ref = excluded.ref, commit_sha = excluded.commit_sha,
       fetched_at = strftime('%Y-%m-%dT%H:%M:%fZ','now')`,
  ).run(libraryId, version.name, version.ref, version.commit);
}

/** The names clients can pin, by name or newest first. */
export function versionNames(db: Database.Database, libraryId: string, order: "name" | "newest" = "name"): string[] {
  const by = order === "name" ? "name" : "fetched_at DESC";
  return db.prepare(`SELECT name FROM library_versions WHERE library_id = ? ORDER BY ${by}`).pluck().all(libraryId) as string[];
}
