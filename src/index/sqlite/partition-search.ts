import Database from "better-sqlite3";
import { MMAP_BYTES } from "../../store/sqlite/mapped-reads.js";
import { collectBuildGarbage } from "../../util/young-garbage.js";
import { PartitionCache, type CopyMade, type PartitionCacheOptions, type PartitionRows } from "./partition-cache.js";
import { generationReader } from "./partition-generations.js";
import { loadVectorExtension, type VectorMatch } from "./vector-index.js";

/** How often copies of partitions written since are looked for and dropped. */
const SWEEP_MS = 60_000;

/** Candidates ranked exactly per neighbour asked for: the quantized scores only have to put the k nearest among them. */
const CANDIDATES = (k: number) => Math.max(2 * k, k + 100);

export interface PartitionSearch {
  nearest(vector: Float32Array, k: number, partition: string): VectorMatch[];
  /**
   * Build the partition's copy now, before its first search: at the server's start for large libraries, and for a
   * large batch written but not yet published (the ingestion publishes it once this resolves). Resolves when the
   * copy is in place or was given up (too small, over the budget: onCopy says).
   */
  warm(partition: string): Promise<void>;
  /**
   * Read every stored vector of the partition once, in slices between which queries are answered: through the
   * memory map, the pages a search's exact vectors come from are then mapped before the first search needs them.
   */
  touch(partition: string): Promise<void>;
  /** Drop a replaced batch's copy (its successor was just published) and never copy it again. */
  retire(partition: string): void;
  /** Resolves when no copy is being built (tests wait for it). */
  settled(): Promise<void>;
  readonly cache: PartitionCache;
  close(): void;
}

/**
 * Nearest-neighbour search of vectors.db for the search worker: from a quantized in-memory copy of the partition
 * when there is one of its current generation (the candidates, then their exact vectors ranked by cosine distance,
 * as sqlite-vec ranks them), else sqlite-vec's full scan, after which a copy of a large partition is built in the
 * background.
 */
export function createPartitionSearch(file: string, options: PartitionCacheOptions, onCopy: (made: CopyMade) => void = () => {}): PartitionSearch {
  const db = openReader(file);
  const knn = db.prepare("SELECT snippet_id, distance FROM vec_snippets WHERE embedding MATCH ? AND k = ? AND partition = ?");
  const stored = db.prepare("SELECT partition, embedding FROM vec_snippets WHERE snippet_id = ?");
  const generationOf = generationReader(db);
  const cache = new PartitionCache(options);
  let building: Promise<void> = Promise.resolve();
  const pause = () => new Promise<void>((resolve) => setImmediate(resolve));
  // A library refreshed leaves the copy of its old batch behind, unused: freed once that batch is deleted.
  const sweeper = setInterval(() => cache.sweep(generationOf), SWEEP_MS);
  sweeper.unref();

  const fromCopy = (copyCandidates: number[], vector: Float32Array, k: number, partition: string): VectorMatch[] => {
    const matches: VectorMatch[] = [];
    for (const snippetId of copyCandidates) {
      const row = stored.get(BigInt(snippetId)) as { partition: string; embedding: Buffer } | undefined;
      // Deleted, or moved to another partition, since the copy was made (the generation check makes this rare).
      if (!row || row.partition !== partition) continue;
      matches.push({ snippetId, distance: cosineDistance(vector, new Float32Array(row.embedding.buffer, row.embedding.byteOffset, row.embedding.byteLength / 4)) });
    }
    return matches.sort((a, b) => a.distance - b.distance || a.snippetId - b.snippetId).slice(0, k);
  };

  /** Queue the copy of this generation of the partition, unless one is there, on its way or was refused. */
  const copyLater = (partition: string, generation: number | undefined, worthIt: boolean) => {
    if (generation === undefined || !cache.wants(partition, generation)) return;
    cache.settle(partition, generation);
    if (!worthIt) return;
    // One copy at a time.
    building = building
      .then(() => {
        cache.sweep(generationOf);
        return cache.build(partition, () => partitionRows(file, partition), pause);
      })
      .then((made) => {
        if (!made) return;
        onCopy(made);
        collectBuildGarbage();
      })
      .catch(() => {});
  };

  return {
    cache,
    nearest(vector, k, partition) {
      const generation = generationOf(partition);
      const copy = generation === undefined ? undefined : cache.get(partition, generation);
      if (copy) return fromCopy(copy.candidates(vector, CANDIDATES(k)), vector, k, partition);
      const rows = knn.all(Buffer.from(vector.buffer, vector.byteOffset, vector.byteLength), k, partition) as Array<{ snippet_id: number; distance: number }>;
      // Fewer rows than asked for are the whole partition, which is small.
      copyLater(partition, generation, rows.length >= Math.min(k, options.minVectors));
      return rows.map((r) => ({ snippetId: Number(r.snippet_id), distance: r.distance }));
    },
    warm(partition) {
      cache.revive(partition);
      const generation = generationOf(partition);
      if (generation === undefined || cache.holds(partition, generation)) return Promise.resolve();
      copyLater(partition, generation, true);
      // The queue's end: this partition's copy, after any queued before it.
      return building;
    },
    async touch(partition) {
      // sqlite-vec's shadow tables (vec0): each chunk of ~1,000 vectors with its row ids (int64, 0 for a free slot),
      // and each snippet's place in them (rowids, keyed by snippet id). Reading a chunk's last bytes walks its every
      // page; the places are read for the chunk's id range only (the table holds every partition's).
      const chunks = db.prepare("SELECT chunk_id FROM vec_snippets_chunks WHERE partition00 = ?").pluck().all(partition) as number[];
      const readChunk = db.prepare("SELECT length(substr(v.vectors, -1)), c.rowids FROM vec_snippets_vector_chunks00 v JOIN vec_snippets_chunks c ON c.chunk_id = v.rowid WHERE v.rowid = ?").raw();
      const readPlaces = db.prepare("SELECT count(chunk_offset) FROM vec_snippets_rowids WHERE rowid BETWEEN ? AND ?").pluck();
      for (const chunk of chunks) {
        const [, rowids] = (readChunk.get(chunk) as [number, Buffer] | undefined) ?? [];
        const ids = rowids ? [...new BigInt64Array(rowids.buffer.slice(rowids.byteOffset, rowids.byteOffset + (rowids.byteLength & ~7)))].filter((id) => id > 0n) : [];
        if (ids.length)
          readPlaces.get(
            ids.reduce((a, b) => (a < b ? a : b)),
            ids.reduce((a, b) => (a > b ? a : b)),
          );
        await pause();
      }
    },
    retire: (partition) => cache.retire(partition),
    settled: () => building,
    close() {
      clearInterval(sweeper);
      db.close();
    },
  };
}

function openReader(file: string): Database.Database {
  const db = new Database(file, { readonly: true, fileMustExist: true });
  loadVectorExtension(db);
  db.pragma("busy_timeout = 5000");
  db.pragma(`mmap_size = ${MMAP_BYTES}`);
  return db;
}

/** A partition's rows and generation read in one transaction, on a connection of their own (queries go on meanwhile). */
function partitionRows(file: string, partition: string): PartitionRows {
  const db = openReader(file);
  db.exec("BEGIN");
  const generation = generationReader(db)(partition) ?? 0;
  const iterator = db.prepare("SELECT snippet_id, embedding FROM vec_snippets WHERE partition = ?").raw().iterate(partition) as IterableIterator<[number | bigint, Buffer]>;
  return {
    generation,
    rows: {
      next() {
        const next = iterator.next();
        if (next.done) return { done: true, value: undefined };
        const [id, blob] = next.value;
        return { done: false, value: { snippetId: Number(id), vector: new Float32Array(blob.buffer, blob.byteOffset, blob.byteLength / 4) } };
      },
    },
    close() {
      iterator.return?.();
      db.close();
    },
  };
}

/** 1 - cosine similarity, sqlite-vec's distance_metric=cosine. */
function cosineDistance(a: Float32Array, b: Float32Array): number {
  let dot = 0,
    aa = 0,
    bb = 0;
  for (let i = 0; i < a.length; i++) {
    dot += a[i]! * b[i]!;
    aa += a[i]! * a[i]!;
    bb += b[i]! * b[i]!;
  }
  return aa === 0 || bb === 0 ? 1 : 1 - dot / (Math.sqrt(aa) * Math.sqrt(bb));
}
