import fs from "node:fs";
import type Database from "better-sqlite3";
import { dataVolume, type DataVolume } from "../config/data-volume.js";
import { LdsError, fromSystemError } from "../errors.js";
import { action, setting } from "../hints.js";
import { keyFingerprint, loadOrCreateKey } from "../secrets/key-file.js";
import { FINGERPRINT_SETTING } from "../store/key-match.js";
import { countSecrets } from "../store/secrets-table.js";
import { hasAnySnippet } from "../store/snippets.js";
import { exists } from "../util/files.js";
import { openStore } from "../store/open-store.js";
import { startCheckpointer, type Checkpointer } from "../store/checkpointer.js";
import { finishKeyRotation } from "./key-rotation.js";
import { createSqliteStore } from "../store/sqlite-store.js";
import type { Store } from "../store/store.js";
import { getSetting, setSetting } from "../store/settings.js";
import { createHashingEmbedder, type Embedder } from "../vectors/embedder.js";
import type { SearchIndex } from "../index/search-index.js";
import { createSqliteSearchIndex } from "../index/sqlite/sqlite-search-index.js";
import { openVectorIndex, renamedPartition, type VectorIndex } from "../index/sqlite/vector-index.js";
import { librarySnippetIds, markVectorsMoved, redirectsWithVectorsToMove } from "../store/library-redirects.js";
import { inlineSnippetWriter, type SnippetWriter } from "./snippet-writer.js";

export interface OpenVolume {
  /** Where its files are (DataVolume: paths only; this object is the opened volume). */
  paths: DataVolume;
  /** Every record of the volume, through the store's contract (store/store.ts). */
  store: Store;
  /** The SQLite handle itself, for the engine's own work only (snapshots, checks): everything else uses `store`. */
  db: Database.Database;
  key: Buffer;
  /** The search index (index/search-index.ts): words and vectors, derived from the records. */
  index: SearchIndex;
  embedder: Embedder;
  /** Set by the server: ingestion and purge writes in a thread of their own (snippet-writer-thread.ts); else inline. */
  snippetWriter?: SnippetWriter;
  /** For the server: both databases' WAL checkpoints in a thread of their own (store/checkpointer.ts). */
  checkpointInThread(onFailure: (err: Error) => void): Checkpointer;
  close(): void;
}


/**
 * Open the data volume: create the directory (mode 0700) on first use, migrate lds.db, load or create
 * secret.key and check that it belongs to this database, and open the vector index.
 */
export function openVolume(root: string, embedder: Embedder = createHashingEmbedder(), options: { mappedReads?: boolean } = {}): OpenVolume {
  const volume = dataVolume(root);
  ensureDirectory(volume.root);
  // Never open (or create) lds.db while a restore is half done: its files are being moved (enter-volume.ts).
  if (exists(volume.restoreJournal)) {
    throw new LdsError("volume_locked", `${volume.root} holds an interrupted restore (${volume.restoreJournal}); it must be finished before the volume is opened.`, {
      hint: `Start ${action("restore.finish")} or any other command on this data volume: it finishes the restore first.`,
    });
  }
  const db = openStore(volume.db, { mappedReads: options.mappedReads });
  let vectors: VectorIndex | undefined;
  try {
    // A key rotation cut short by a crash is finished (or dropped) before the key is read.
    finishKeyRotation(volume, db);
    const key = loadOrCreateKey(volume.key, countSecrets(db) > 0);
    checkKeyBelongs(db, key, volume);
    vectors = openVectorIndex(volume.vectors, embedder, { mappedReads: options.mappedReads });
    // Without snippets there is nothing to embed: a new (or outdated but useless) vector table is made current now.
    if (vectors.stale && !hasAnySnippet(db)) {
      vectors.recreate();
      vectors.markComplete();
    }
    moveRenamedLibraryVectors(db, vectors);
    const opened = vectors;
    return {
      paths: volume,
      store: createSqliteStore(db, key),
      db,
      key,
      index: createSqliteSearchIndex(db, opened, { store: volume.db, vectors: volume.vectors }),
      embedder,
      checkpointInThread: (onFailure) =>
        startCheckpointer(
          [
            { db, file: volume.db },
            { db: opened.db, file: volume.vectors },
          ],
          onFailure,
        ),
      close() {
        opened.close();
        db.close();
      },
    };
  } catch (err) {
    vectors?.close();
    db.close();
    throw err;
  }
}

function checkKeyBelongs(db: Database.Database, key: Buffer, volume: DataVolume): void {
  const expected = getSetting(db, FINGERPRINT_SETTING);
  const actual = keyFingerprint(key);
  if (expected === undefined) return setSetting(db, FINGERPRINT_SETTING, actual);
  if (expected !== actual) {
    throw new LdsError("key_missing", `${volume.key} is not the key this database was sealed with.`, {
      hint: `Put back the secret.key that belongs to ${volume.db} (it is in the same backup archive).`,
    });
  }
}

export function ensureDirectory(dir: string): void {
  try {
    fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
  } catch (err) {
    throw fromSystemError(err, dir);
  }
  if (!fs.statSync(dir).isDirectory()) {
    throw new LdsError("data_dir_invalid", `${dir} exists but is not a directory.`, {
      hint: `Point ${setting("dataDir")} at a directory.`,
    });
  }
}

/** Where an ingestion's writes go: the server's writer thread, or this thread (a command). */
export function snippetWriterOf(volume: OpenVolume): SnippetWriter {
  return volume.snippetWriter ?? inlineSnippetWriter(volume.store, volume.index);
}

/**
 * The vectors of libraries renamed by a migration (schema 13: private ids to /~team-<N>/...) follow their library
 * into its new partitions, a chunk of snippets per transaction; each rename is recorded as done once its vectors
 * moved, so a crash midway resumes at the next open (moving a vector already moved is a no-op). A stale index is
 * refilled from the snippets under their new ids anyway: nothing to move.
 */
function moveRenamedLibraryVectors(db: Database.Database, vectors: VectorIndex): void {
  for (const { oldId, newId } of redirectsWithVectorsToMove(db)) {
    if (!vectors.stale) {
      const ids = librarySnippetIds(db, newId);
      for (let i = 0; i < ids.length; i += 1000) vectors.repartition(ids.slice(i, i + 1000), (partition) => renamedPartition(partition, oldId, newId));
    }
    markVectorsMoved(db, oldId);
  }
}
