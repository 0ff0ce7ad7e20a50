import type Database from "better-sqlite3";

/** A table of lds.db whose rows a copy between engines carries: its columns in declaration order, its key first. */
export interface RecordsTable {
  name: string;
  columns: string[];
  /** The primary key's columns, in key order: rows are copied in this order (ids ascending). */
  key: string[];
}

/**
 * Tables each engine keeps for itself, never copied: the versions applied are recorded by each engine's own
 * migrations as they ran (a copy is created at the same version, not given another engine's history).
 */
const ENGINE_OWN_TABLES = new Set(["schema_migrations"]);

/**
 * The tables of an lds.db whose rows are records: ordinary tables only. The full-text index (a virtual table and its
 * shadow tables) is derived from the snippets and rebuilt from them, never copied.
 */
export function recordsTables(db: Database.Database): RecordsTable[] {
  const listed = db.prepare("SELECT name FROM pragma_table_list WHERE schema = 'main' AND type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name").pluck().all() as string[];
  return listed
    .filter((name) => !ENGINE_OWN_TABLES.has(name))
    .map((name) => {
      const info = db.prepare("SELECT name, pk FROM pragma_table_info(?) ORDER BY cid").all(name) as Array<{ name: string; pk: number }>;
      return {
        name,
        columns: info.map((c) => c.name),
        key: info
          .filter((c) => c.pk > 0)
          .sort((a, b) => a.pk - b.pk)
          .map((c) => c.name),
      };
    });
}

/** An identifier quoted for SQL (both engines quote alike). */
export const quoted = (name: string) => `"${name.replace(/"/g, '""')}"`;
