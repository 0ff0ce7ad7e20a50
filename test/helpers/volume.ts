import { createHash } from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import Database from "better-sqlite3";
import { openVolume, type OpenVolume } from "../../src/volume/open-volume.js";
import { putSecret } from "../../src/store/sqlite/secrets-table.js";
import type { SqliteSearchIndex } from "../../src/index/sqlite/sqlite-search-index.js";
import { partitionOf, type VectorIndex } from "../../src/index/sqlite/vector-index.js";
import { dbOf } from "./sqlite-db.js";

/** The SQLite search index's vector table, for tests that look inside it. */
export const vectorsOf = (volume: OpenVolume): VectorIndex => (volume.index as SqliteSearchIndex).vectors;

export interface SeedOptions {
  libraries?: Array<{ id: string; state?: string; snippets?: number }>;
  /** Mark a running job for this library (it was being indexed). */
  runningJobFor?: string;
  secret?: string;
}

/** Create a data volume with libraries, snippets, vectors and a sealed secret, as a server would have written. */
export async function seedVolume(root: string, options: SeedOptions = {}): Promise<void> {
  const volume = await openVolume(root);
  try {
    const { embedder, key } = volume;
    const vectors = vectorsOf(volume);
    const db = dbOf(volume);
    db.prepare("INSERT INTO teams (name, plan) VALUES ('seed-team', 'pro')").run();
    if (options.secret) putSecret(db, key, "team:1:git-token", options.secret);
    const libraries = options.libraries ?? [{ id: "/acme/widgets" }, { id: "/acme/gadgets" }];
    const addLibrary = db.prepare("INSERT INTO libraries (id, team_id, title, source, state) VALUES (?, 1, ?, 'git', ?)");
    const addSnippet = db.prepare("INSERT INTO snippets (library_id, kind, title, content) VALUES (?, 'info', ?, ?)");
    for (const lib of libraries) {
      addLibrary.run(lib.id, lib.id.split("/").pop(), lib.state ?? "finalized");
      const count = lib.snippets ?? 3;
      const texts = Array.from({ length: count }, (_, i) => `Snippet ${i} of ${lib.id}: how to configure ${lib.id} option ${i}.`);
      const embedded = await embedder.embed(texts);
      texts.forEach((text, i) => {
        const id = Number(addSnippet.run(lib.id, `Snippet ${i}`, text).lastInsertRowid);
        vectors.upsert([{ snippetId: id, partition: partitionOf(lib.id), vector: embedded[i]! }]);
      });
    }
    if (options.runningJobFor) {
      db.prepare("INSERT INTO jobs (library_id, kind, state) VALUES (?, 'ingest', 'running')").run(options.runningJobFor);
    }
  } finally {
    volume.close();
  }
}

/** SHA-256 of every file below `root` (paths relative), to prove a volume was left untouched. */
export function fingerprintTree(root: string): Record<string, string> {
  const out: Record<string, string> = {};
  const walk = (dir: string) => {
    for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
      const full = path.join(dir, entry.name);
      if (entry.isDirectory()) walk(full);
      else out[path.relative(root, full)] = createHash("sha256").update(fs.readFileSync(full)).digest("hex");
    }
  };
  walk(root);
  return out;
}

/** A library's processing state and its reason, read from a volume's lds.db (read-only: safe beside a running server). */
export function libraryState(dataDir: string, id: string): { state: string; state_reason: string | null } | undefined {
  const db = new Database(path.join(dataDir, "lds.db"), { readonly: true });
  try {
    return db.prepare("SELECT state, state_reason FROM libraries WHERE id = ?").get(id) as { state: string; state_reason: string | null } | undefined;
  } finally {
    db.close();
  }
}

/** Library ids in a volume's lds.db (read-only: safe beside a running server). */
export function libraryIds(dataDir: string): string[] {
  const db = new Database(path.join(dataDir, "lds.db"), { readonly: true });
  try {
    return db.prepare("SELECT id FROM libraries ORDER BY id").pluck().all() as string[];
  } finally {
    db.close();
  }
}

/** Add ~`mib` MiB of incompressible rows, so that a backup or restore takes long enough to observe or interrupt. */
export function addBallast(dataDir: string, mib: number): void {
  const db = new Database(path.join(dataDir, "lds.db"));
  db.exec(`CREATE TABLE IF NOT EXISTS ballast (b BLOB);
    WITH RECURSIVE c(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM c WHERE i < ${mib})
    INSERT INTO ballast SELECT randomblob(1048576) FROM c;`);
  db.close();
}
