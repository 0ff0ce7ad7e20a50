import type Database from "better-sqlite3";
import type { DataVolume } from "../../config/data-volume.js";
import { LdsError } from "../../errors.js";
import { keyFingerprint, loadOrCreateKey } from "../../secrets/key-file.js";
import { countSecrets, FINGERPRINT_SETTING } from "../../store/sqlite/secrets-table.js";
import { hasAnySnippet } from "../../store/sqlite/snippets.js";
import { createSqliteStore } from "../../store/sqlite/sqlite-store.js";
import type { Store } from "../../store/store.js";
import { getSetting, setSetting } from "../../store/sqlite/settings.js";
import { librarySnippetIds, markVectorsMoved, redirectsWithVectorsToMove } from "../../store/sqlite/library-redirects.js";
import type { Embedder } from "../../vectors/embedder.js";
import { createSqliteSearchIndex, type SqliteSearchIndex } from "../../index/sqlite/sqlite-search-index.js";
import { openVectorIndex, renamedPartition, type VectorIndex } from "../../index/sqlite/vector-index.js";
import type { ConnectedDatabases, OpenedDatabases, OpenOptions } from "../engine.js";
import { startCheckpointer } from "./checkpointer.js";
import { finishKeyRotation } from "./key-rotation.js";
import { openStore } from "./open-store.js";
import { sqliteFiles } from "./volume-files.js";

/** Each store this engine made, with its connection: for this engine's own work on an opened volume (and tests). */
const connections = new WeakMap<Store, Database.Database>();

/** The lds.db connection behind a store this engine opened. */
export function sqliteDatabaseOf(store: Store): Database.Database {
  const db = connections.get(store);
  if (!db) throw new Error("this store was not opened by the SQLite engine");
  return db;
}

/**
 * Open lds.db (migrated), finish an interrupted key rotation, load or create secret.key and check that it belongs
 * to this database, and open the vector index.
 */
export function openDatabases(volume: DataVolume, options: OpenOptions): OpenedDatabases {
  const db = openStore(sqliteFiles(volume).records, { mappedReads: options.mappedReads });
  let vectors: VectorIndex | undefined;
  try {
    // A key rotation cut short by a crash is finished (or dropped) before the key is read.
    finishKeyRotation(volume, db);
    const key = loadOrCreateKey(volume.key, countSecrets(db) > 0);
    checkKeyBelongs(db, key, volume);
    vectors = openVectorIndex(sqliteFiles(volume).vectors, options.embedder, { mappedReads: options.mappedReads });
    // Without snippets there is nothing to embed: a new (or outdated but useless) vector table is made current now.
    if (vectors.stale && !hasAnySnippet(db)) {
      vectors.recreate();
      vectors.markComplete();
    }
    moveRenamedLibraryVectors(db, vectors);
    const opened = vectors;
    const bound = bindDatabases(volume, db, opened, key);
    return {
      ...bound,
      key,
      checkpointInThread(onFailure) {
        const checkpointer = startCheckpointer(
          [
            { db, file: sqliteFiles(volume).records },
            { db: opened.db, file: sqliteFiles(volume).vectors },
          ],
          onFailure,
        );
        // A large batch's probe checkpoints first (prepare-batch.ts says why).
        bound.index.useCheckpoint(checkpointer.now);
        return {
          async close() {
            bound.index.useCheckpoint(undefined);
            await checkpointer.close();
          },
        };
      },
    };
  } catch (err) {
    vectors?.close();
    db.close();
    throw err;
  }
}

/**
 * Connections of a thread of its own (the snippet writer) to a volume the server opened: lds.db already migrated,
 * mapped like the server's own connections (the full-text index's upkeep reads many pages: without, each ingestion
 * chunk took several milliseconds longer), and no automatic checkpoints: the server's checkpoint thread
 * checkpoints both files (checkpointer.ts), and a checkpoint inside these commits would add its fsync to every
 * chunk's write.
 */
export function connectDatabases(volume: DataVolume, key: Buffer, embedder: Embedder): ConnectedDatabases {
  const db = openStore(sqliteFiles(volume).records, { migrate: false, mappedReads: true });
  let vectors: VectorIndex | undefined;
  try {
    vectors = openVectorIndex(sqliteFiles(volume).vectors, embedder, { mappedReads: true });
    for (const connection of [db, vectors.db]) connection.pragma("wal_autocheckpoint = 0");
  } catch (err) {
    vectors?.close();
    db.close();
    throw err;
  }
  return bindDatabases(volume, db, vectors, key);
}

/** The records and the search index over an opened lds.db and vector index, and how to close both. */
function bindDatabases(volume: DataVolume, db: Database.Database, vectors: VectorIndex, key: Buffer): ConnectedDatabases & { index: SqliteSearchIndex } {
  const store = createSqliteStore(db, key);
  connections.set(store, db);
  return {
    store,
    index: createSqliteSearchIndex(db, vectors, { store: sqliteFiles(volume).records, vectors: sqliteFiles(volume).vectors }),
    close() {
      vectors.close();
      db.close();
    },
  };
}

function checkKeyBelongs(db: Database.Database, key: Buffer, volume: DataVolume): void {
  const expected = getSetting(db, FINGERPRINT_SETTING);
  const actual = keyFingerprint(key);
  if (expected === undefined) return setSetting(db, FINGERPRINT_SETTING, actual);
  if (expected !== actual) {
    throw new LdsError("key_missing", `${volume.key} is not the key this database was sealed with.`, {
      hint: `Put back the secret.key that belongs to ${sqliteFiles(volume).records} (it is in the same backup archive).`,
    });
  }
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
