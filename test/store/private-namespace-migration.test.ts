import path from "node:path";
import Database from "better-sqlite3";
import { describe, expect, it } from "vitest";
import { migrate } from "../../src/engine/sqlite/migrate.js";
import { MIGRATIONS } from "../../src/engine/sqlite/migrations.js";
import { openStore } from "../../src/engine/sqlite/open-store.js";
import { tempDir } from "../helpers/temp.js";

describe("schema 13: private ids to /~team-<N>/", () => {
  it("renames with every record following, keeps public ids, and never lands two libraries on one id", () => {
    const file = path.join(tempDir(), "lds.db");
    const old = new Database(file);
    migrate(old, MIGRATIONS, 12);
    old.exec(`
      INSERT INTO teams (id, name) VALUES (2, 'bcorp');
      INSERT INTO libraries (id, team_id, title, source, private) VALUES
        ('/team-2/a/b', 2, 'b', 'git', 1), ('/a/b', 2, 'b', 'git', 1), ('/team-2/c/d', NULL, 'd', 'git', 0), ('/pub/lic', NULL, 'p', 'git', 0);
      INSERT INTO snippets (library_id, kind, title, content, version, batch) VALUES ('/team-2/a/b', 'info', 'T', 'quartz', 'v1', 3);
      INSERT INTO snippet_batches (library_id, version, batch, state, snippets, tokens) VALUES ('/team-2/a/b', 'v1', 3, 'live', 1, 1);
      INSERT INTO library_versions (library_id, name, ref) VALUES ('/team-2/a/b', 'v1', 'v1');
      INSERT INTO jobs (library_id, kind) VALUES ('/team-2/a/b', 'refresh');
    `);
    old.close();
    const db = openStore(file);
    try {
      // The scoped one moves; the 0.3.0 /a/b, whose new id is taken by it, keeps its id; public ones stay.
      expect(db.prepare("SELECT id FROM libraries ORDER BY id").pluck().all()).toEqual(["/a/b", "/pub/lic", "/team-2/c/d", "/~team-2/a/b"]);
      for (const table of ["snippets", "snippet_batches", "library_versions", "jobs"]) {
        expect(db.prepare(`SELECT DISTINCT library_id FROM ${table}`).pluck().all(), table).toEqual(["/~team-2/a/b"]);
      }
      expect(db.prepare("SELECT count(*) FROM snippets_fts WHERE snippets_fts MATCH 'quartz'").pluck().get()).toBe(1);
      expect(db.pragma("foreign_key_check")).toEqual([]);
      expect(db.prepare("SELECT subject, details FROM audit_log WHERE action = 'library.rename'").all()).toEqual([
        { subject: "/~team-2/a/b", details: JSON.stringify({ from: "/team-2/a/b", to: "/~team-2/a/b" }) },
      ]);
    } finally {
      db.close();
    }
  });
});
