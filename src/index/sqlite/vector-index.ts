import Database from "better-sqlite3";
import * as sqliteVec from "sqlite-vec";
import { fromSystemError } from "../../errors.js";
import { MMAP_BYTES } from "../../store/sqlite/mapped-reads.js";
import { advanceGenerations, createGenerationTable, resetGenerations } from "./partition-generations.js";

export interface VectorMatch {
  snippetId: number;
  distance: number;
}

export interface VectorItem {
  snippetId: number;
  /** The library (and version) the snippet belongs to: see partitionOf. */
  partition: string;
  vector: Float32Array;
}

export interface VectorIndex {
  readonly db: Database.Database;
  readonly dimensions: number;
  /**
   * True when the stored vectors cannot be used as they are (older layout, another embedder, or an unfinished
   * rebuild): the table is empty and must be refilled from the snippets (see rebuildVectors).
   */
  readonly stale: boolean;
  /** The embedder whose vectors the table holds (or is being filled with), as vector_meta records it. */
  readonly builtBy: string | undefined;
  upsert(items: VectorItem[]): void;
  remove(snippetIds: number[]): void;
  /** The k nearest snippets of one partition (one library version): a search never scans other libraries. */
  nearest(vector: Float32Array, k: number, partition: string): VectorMatch[];
  count(): number;
  /** Whether this snippet has a vector. */
  has(snippetId: number): boolean;
  /**
   * Move these snippets' vectors to the partition `rename` gives for their current one (undefined: stay), as
   * upsert moves them (delete, insert, partition generations advanced): a renamed library's vectors follow it.
   */
  repartition(snippetIds: number[], rename: (partition: string) => string | undefined): void;
  /** Drop whatever table is there and create an empty one of this layout and embedder (the start of a rebuild). */
  recreate(): void;
  /** Record that every snippet has its vector again. */
  markComplete(): void;
  close(): void;
}

/** Layout 2: vec0 with a partition key per library version (layout 1 had none: every search scanned everything). */
const LAYOUT = "2";

/**
 * The vector partition of a library version's snippet batch; "" is the library's current content. Ids never
 * contain spaces. Batch 0 (rows from before batches, schema < 11) keeps the partition it always had, so that an
 * upgrade does not rebuild the index; a new batch has a partition of its own, so that a search scans only the
 * batch it is served from while the next one is written.
 */
export function partitionOf(libraryId: string, version = "", batch = 0): string {
  const base = version ? `${libraryId} ${version}` : libraryId;
  return batch ? `${base} #${batch}` : base;
}

/** A partition of library `from` (any version or batch) as the same partition of library `to`; else undefined. */
export function renamedPartition(partition: string, from: string, to: string): string | undefined {
  return partition === from || partition.startsWith(`${from} `) ? to + partition.slice(from.length) : undefined;
}

/** The library (and version) of a partition, as an operator names it: "/owner/repo" or "/owner/repo (version v2)". */
export function partitionLibrary(partition: string): string {
  const [libraryId, version] = partition.split(" ");
  return version && !version.startsWith("#") ? `${libraryId} (version ${version})` : libraryId!;
}

/** Load sqlite-vec into a connection (needed to read the vec0 tables, including in a snapshot being verified). */
export function loadVectorExtension(db: Database.Database): void {
  sqliteVec.load(db);
}

/**
 * Open vectors.db: one vec0 table keyed by snippet id and partitioned by library version. The layout, the
 * embedder and whether the table is complete are recorded in vector_meta; when any differs the index reports
 * itself stale and is left as it is: only a rebuild (rebuildVectors) recreates it, so that merely opening a volume
 * (`lds keys create` during an upgrade, a cron backup) never drops an index another process may still be using.
 * A brand-new file gets its table at once.
 */
export function openVectorIndex(file: string, embedder: { id: string; dimensions: number }, options: { mappedReads?: boolean } = {}): VectorIndex {
  let db: Database.Database;
  try {
    db = new Database(file);
  } catch (err) {
    throw fromSystemError(err, file);
  }
  loadVectorExtension(db);
  db.pragma("busy_timeout = 5000");
  db.pragma("journal_mode = WAL");
  db.pragma("synchronous = NORMAL");
  // Every search scans its partition's vectors: the server reads them mapped rather than copied through the page
  // cache (a command does not: mapped pages count in its RSS, see openStore).
  if (options.mappedReads) db.pragma(`mmap_size = ${MMAP_BYTES}`);
  db.exec("CREATE TABLE IF NOT EXISTS vector_meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)");
  createGenerationTable(db);
  const readMeta = () =>
    new Map(
      db
        .prepare("SELECT key, value FROM vector_meta")
        .all()
        .map((r) => [(r as { key: string }).key, (r as { value: string }).value]),
    );
  let meta = readMeta();
  if (meta.size === 0) {
    recreate(db, embedder);
    meta = readMeta();
  }
  const current = meta.get("layout") === LAYOUT && meta.get("embedder") === embedder.id && Number(meta.get("dimensions")) === embedder.dimensions;
  let isStale = !current || meta.get("complete") !== "1";

  // Prepared on first use: against a table of an older layout they would not compile (no partition column).
  const statements = () => {
    cached ??= {
      insert: db.prepare("INSERT INTO vec_snippets (snippet_id, partition, embedding) VALUES (?, ?, ?)"),
      del: db.prepare("DELETE FROM vec_snippets WHERE snippet_id = ?"),
      partitionOf: db.prepare("SELECT partition FROM vec_snippets WHERE snippet_id = ?").pluck(),
      stored: db.prepare("SELECT partition, embedding FROM vec_snippets WHERE snippet_id = ?"),
      knn: db.prepare("SELECT snippet_id, distance FROM vec_snippets WHERE embedding MATCH ? AND k = ? AND partition = ?"),
    };
    return cached;
  };
  let cached: { insert: Database.Statement; del: Database.Statement; partitionOf: Database.Statement; stored: Database.Statement; knn: Database.Statement } | undefined;
  /** Delete a snippet's vector if it has one; the partition it was in, which thereby changed. */
  const removeOne = (snippetId: number): string | undefined => {
    const { del, partitionOf } = statements();
    const partition = partitionOf.get(BigInt(snippetId)) as string | undefined;
    if (partition !== undefined) del.run(BigInt(snippetId));
    return partition;
  };
  const asBlob = (v: Float32Array) => Buffer.from(v.buffer, v.byteOffset, v.byteLength);

  const upsert = db.transaction((items: VectorItem[]) => {
    const { insert } = statements();
    const changed = new Set<string>();
    // vec0 has no UPSERT: delete then insert, inside one transaction.
    for (const { snippetId, partition, vector } of items) {
      const before = removeOne(snippetId);
      if (before !== undefined) changed.add(before);
      insert.run(BigInt(snippetId), partition, asBlob(vector));
      changed.add(partition);
    }
    advanceGenerations(db, changed);
  });
  const remove = db.transaction((ids: number[]) => {
    const changed = new Set<string>();
    for (const id of ids) {
      const partition = removeOne(id);
      if (partition !== undefined) changed.add(partition);
    }
    advanceGenerations(db, changed);
  });
  const repartition = db.transaction((ids: number[], rename: (partition: string) => string | undefined) => {
    const { insert, del, stored } = statements();
    const changed = new Set<string>();
    for (const id of ids) {
      const row = stored.get(BigInt(id)) as { partition: string; embedding: Buffer } | undefined;
      const target = row && rename(row.partition);
      if (!row || target === undefined || target === row.partition) continue;
      del.run(BigInt(id));
      insert.run(BigInt(id), target, row.embedding);
      changed.add(row.partition).add(target);
    }
    advanceGenerations(db, changed);
  });
  return {
    db,
    dimensions: embedder.dimensions,
    get stale() {
      return isStale;
    },
    get builtBy() {
      return meta.get("embedder");
    },
    // Immediate transactions: each reads before it writes, and a deferred one would then fail at once (SQLITE_BUSY,
    // no wait) whenever another connection (the server's snippet writer thread, a command) is writing.
    upsert: (items) => upsert.immediate(items),
    remove: (ids) => remove.immediate(ids),
    repartition: (ids, rename) => repartition.immediate(ids, rename),
    nearest(vector, k, partition) {
      return (statements().knn.all(asBlob(vector), k, partition) as Array<{ snippet_id: number; distance: number }>).map((row) => ({
        snippetId: Number(row.snippet_id),
        distance: row.distance,
      }));
    },
    count() {
      return db.prepare("SELECT count(*) FROM vec_snippets").pluck().get() as number;
    },
    has(snippetId) {
      return statements().partitionOf.get(BigInt(snippetId)) !== undefined;
    },
    recreate() {
      cached = undefined;
      recreate(db, embedder);
      meta = readMeta();
      isStale = true;
    },
    markComplete() {
      db.prepare("INSERT OR REPLACE INTO vector_meta (key, value) VALUES ('complete', '1')").run();
      isStale = false;
    },
    close() {
      db.close();
    },
  };
}

function recreate(db: Database.Database, embedder: { id: string; dimensions: number }): void {
  db.transaction(() => {
    db.exec("DROP TABLE IF EXISTS vec_snippets");
    db.exec(`CREATE VIRTUAL TABLE vec_snippets USING vec0(
      snippet_id INTEGER PRIMARY KEY, partition TEXT PARTITION KEY, embedding float[${embedder.dimensions}] distance_metric=cosine)`);
    const set = db.prepare("INSERT OR REPLACE INTO vector_meta (key, value) VALUES (?, ?)");
    set.run("layout", LAYOUT);
    set.run("embedder", embedder.id);
    set.run("dimensions", String(embedder.dimensions));
    // Complete only once every snippet has its vector; an empty volume is made complete by its first rebuild.
    set.run("complete", "0");
    resetGenerations(db);
  })();
}
