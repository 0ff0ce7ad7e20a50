import type Database from "better-sqlite3";

/**
 * Every write to a vector partition gives it a new generation number, so that a reader holding a copy of the
 * partition (the search worker's quantized copies, partition-cache.ts) knows whether the copy is still the
 * partition's content with one indexed lookup. Numbers come from one counter in vector_meta that only grows: a
 * recreated index never hands out a number an older copy was made at.
 */

export function createGenerationTable(db: Database.Database): void {
  db.exec("CREATE TABLE IF NOT EXISTS vector_partitions (partition TEXT PRIMARY KEY, generation INTEGER NOT NULL)");
}

/** Give each partition a new generation; call inside the transaction that writes them. */
export function advanceGenerations(db: Database.Database, partitions: Iterable<string>): void {
  const touched = [...new Set(partitions)];
  if (touched.length === 0) return;
  const current = Number(db.prepare("SELECT value FROM vector_meta WHERE key = 'generation'").pluck().get() ?? 0);
  const next = current + 1;
  db.prepare("INSERT OR REPLACE INTO vector_meta (key, value) VALUES ('generation', ?)").run(String(next));
  const set = db.prepare("INSERT INTO vector_partitions (partition, generation) VALUES (?, ?) ON CONFLICT (partition) DO UPDATE SET generation = excluded.generation");
  for (const partition of touched) set.run(partition, next);
}

/** Forget every partition's generation (the index was recreated) while the counter keeps counting. */
export function resetGenerations(db: Database.Database): void {
  advanceGenerations(db, db.prepare("SELECT partition FROM vector_partitions").pluck().all() as string[]);
}

/**
 * Reads a partition's generation: 0 for a partition never written since generations were kept (it has not changed
 * since then either), undefined when the file has no generations at all (written by an older LDS: a reader then
 * keeps no copies).
 */
export function generationReader(db: Database.Database): (partition: string) => number | undefined {
  const exists = db.prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'vector_partitions'").get();
  if (!exists) return () => undefined;
  const read = db.prepare("SELECT generation FROM vector_partitions WHERE partition = ?").pluck();
  return (partition) => (read.get(partition) as number | undefined) ?? 0;
}
