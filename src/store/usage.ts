import type Database from "better-sqlite3";

/** One counter of library_usage: requests of a library on a day (UTC, YYYY-MM-DD), by dimension and name. */
export interface UsageCount {
  libraryId: string;
  day: string;
  /** "client" (api, mcp, cli), "topic" (a query word), "mcpClient" (the MCP client's name). */
  dimension: "client" | "topic" | "mcpClient";
  name: string;
  count: number;
}

/** Add a batch of counters in one transaction (the server buffers requests and writes them every few seconds). */
export function addUsage(db: Database.Database, counts: UsageCount[]): void {
  const add = db.prepare(
    `INSERT INTO library_usage (library_id, day, dimension, name, count) VALUES (?, ?, ?, ?, ?)
     ON CONFLICT (library_id, day, dimension, name) DO UPDATE SET count = count + excluded.count`,
  );
  db.transaction(() => {
    for (const c of counts) add.run(c.libraryId, c.day, c.dimension, c.name, c.count);
  }).immediate();
}

/** A library's counters from `fromDay` on. */
export function readUsage(db: Database.Database, libraryId: string, fromDay: string): UsageCount[] {
  return db
    .prepare("SELECT library_id AS libraryId, day, dimension, name, count FROM library_usage WHERE library_id = ? AND day >= ? ORDER BY day")
    .all(libraryId, fromDay) as UsageCount[];
}

/** Forget counters of days before `beforeDay`; returns how many rows went. */
export function pruneUsage(db: Database.Database, beforeDay: string): number {
  return db.prepare("DELETE FROM library_usage WHERE day < ?").run(beforeDay).changes;
}
