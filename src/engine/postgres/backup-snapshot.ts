import { createHash } from "node:crypto";
import fs from "node:fs";
import type pg from "pg";
import type { DataVolume } from "../../config/data-volume.js";
import type { PostgresSettings } from "../../config/database-settings.js";
import { LdsError, fromSystemError } from "../../errors.js";
import { setting } from "../../hints.js";
import { loadSharedKey } from "../../secrets/key-file.js";
import { openPool } from "../../store/postgres/pool.js";
import { sqlOn } from "../../store/postgres/sql.js";
import { schemaVersionOf } from "../../store/postgres/migrate.js";
import { bytesToVector } from "../../store/postgres/vector-bytes.js";
import type { CopiedFile, SnapshotVectorsOptions } from "../engine.js";
import { keyMismatchOfFile } from "../sqlite/key-match.js";
import { createVectorsFile, type SnippetVector, type VectorsFileWriter } from "../sqlite/vectors-file-writer.js";
import { openCopyConnection, type CopyConnection } from "./copy-connection.js";
import { poolSettingsOf, postgresSettingsOf } from "./open-postgres.js";
import { exportRecords } from "./records-export.js";
import { UNKNOWN_VECTORS_EMBEDDER, recordedVectorsEmbedder, type VectorsEmbedder } from "./vectors-embedder.js";

/**
 * A backup of a PostgreSQL volume's records (issue 34, "Backup and restore: the same archive format"): the archive of
 * a SQLite volume, made from ONE state of the database. The vectors' step begins a REPEATABLE READ transaction and
 * exports its snapshot (pg_export_snapshot); the records' step (exportRecords, perhaps on another thread) imports it
 * with SET TRANSACTION SNAPSHOT. The exporting transaction stays open until the records' step says it has taken the
 * snapshot (`recordsTaken`), at most HOLD_MS after the vectors are copied, and is ended on every path.
 */

/** Vectors read per round trip: about 1.5 MiB of 384-dimension float32 vectors. */
const VECTORS_PER_READ = 1_000;

/** How long the exporting transaction waits for the records' step once the vectors are copied: it imports at its start. */
const HOLD_MS = 120_000;

/** A pool that only lends its settings (server, credentials, TLS) to a connection of the backup's own. */
async function ownConnection(settings: PostgresSettings): Promise<CopyConnection> {
  const pool = openPool({ ...poolSettingsOf(settings), max: 1 });
  try {
    return await openCopyConnection(pool);
  } finally {
    await pool.end();
  }
}

/** The volume is whole for a backup: its key file readable, its database reachable, its records at a schema version. */
export async function checkPostgresWhole(volume: DataVolume): Promise<void> {
  const settings = postgresSettingsOf(volume);
  loadSharedKey(settings.keyFile);
  const pool = openPool({ ...poolSettingsOf(settings), max: 1 });
  try {
    const sql = sqlOn(pool, settings.endpoint);
    const made = await sql.row<{ made: string | null }>("SELECT to_regclass('schema_migrations')::text AS made");
    const version = made?.made ? await schemaVersionOf(sql) : 0;
    if (version === 0) {
      throw new LdsError("data_dir_invalid", `The database at ${settings.endpoint.host}:${settings.endpoint.port} holds no LDS records (no schema version): there is nothing to back up.`, {
        hint: `Check ${setting("databaseUrl")}: a database LDS serves has been opened by it once.`,
      });
    }
  } finally {
    await pool.end();
  }
}

/**
 * The vectors of every snippet in the snapshot into a new vector index at `target` (engine/sqlite/vectors-file-writer.ts),
 * read in pages of ids from the exported snapshot; answers the file's hash.
 */
export async function snapshotPostgresVectors(volume: DataVolume, target: string, options: SnapshotVectorsOptions): Promise<CopiedFile> {
  const connection = await ownConnection(postgresSettingsOf(volume));
  let writer: VectorsFileWriter | undefined;
  try {
    const { sql } = connection;
    await sql.run("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY");
    const snapshot = (await sql.row<{ id: string }>("SELECT pg_export_snapshot() AS id"))!.id;
    options.onPinned(snapshot);
    // Read in the snapshot: the embedder the database records as the vectors' maker, never the command's own settings.
    const recorded = await recordedVectorsEmbedder(sql);
    let after = 0;
    for (;;) {
      const rows = await sql.rows<{ id: number; library_id: string; version: string; batch: number; vector: Buffer }>(
        `SELECT s.id, s.library_id, s.version, s.batch, v.vector FROM snippets s JOIN snippet_vectors v ON v.snippet_id = s.id
          WHERE s.id > $1 ORDER BY s.id LIMIT ${VECTORS_PER_READ}`,
        [after],
      );
      const vectors: SnippetVector[] = rows.map((r) => ({ snippetId: r.id, libraryId: r.library_id, version: r.version, batch: r.batch, vector: bytesToVector(r.vector) }));
      writer ??= createVectorsFile(target, vectorsLabel(recorded, vectors[0]?.vector.length));
      writer.add(vectors);
      if (rows.length < VECTORS_PER_READ) break;
      after = rows[rows.length - 1]!.id;
    }
    writer.finish();
    writer = undefined;
    await holdUntilTaken(options.recordsTaken);
    await sql.run("COMMIT");
  } catch (err) {
    writer?.abort();
    throw err;
  } finally {
    // Ends the transaction too, whatever happened: no connection is left idle in a transaction.
    await connection.close();
  }
  return hashed(target);
}

/**
 * The embedder the database records, when its vectors have its dimensions; else one no volume has, so that a restore
 * rebuilds these vectors rather than trust them.
 */
function vectorsLabel(recorded: VectorsEmbedder | undefined, dimensions: number | undefined): VectorsEmbedder {
  if (recorded && (dimensions === undefined || dimensions === recorded.dimensions)) return recorded;
  return { id: UNKNOWN_VECTORS_EMBEDDER, dimensions: dimensions ?? 1 };
}

/** Wait for the records' step to have taken the snapshot, at most HOLD_MS: an importer that never came fails by itself. */
async function holdUntilTaken(taken: Promise<void> | undefined): Promise<void> {
  if (!taken) return;
  let timer: NodeJS.Timeout | undefined;
  const bound = new Promise<void>((resolve) => (timer = setTimeout(resolve, HOLD_MS)));
  try {
    await Promise.race([taken.catch(() => {}), bound]);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * The records into a new SQLite file (exportRecords), from the snapshot the vectors' step pinned when there is one;
 * then the key, from the volume's key file, refused (key_missing, before the key is written) unless it is the key
 * whose fingerprint the records' copy holds.
 */
export async function snapshotPostgresRecords(volume: DataVolume, target: { records: string; key: string }, pinned?: string): Promise<void> {
  const settings = postgresSettingsOf(volume);
  const key = loadSharedKey(settings.keyFile);
  const pool: pg.Pool = openPool({ ...poolSettingsOf(settings), max: 1 });
  try {
    await exportRecords(pool, target.records, pinned === undefined ? {} : { snapshot: pinned });
  } finally {
    await pool.end();
  }
  const mismatch = keyMismatchOfFile(target.records, key);
  if (mismatch) {
    throw new LdsError("key_missing", `${settings.keyFile} is not the key the database at ${settings.endpoint.host}:${settings.endpoint.port} was sealed with (${mismatch}); no archive was written.`, {
      hint: `Give ${setting("secretKeyFile")} the key file the replicas of this database use, then back up again.`,
    });
  }
  try {
    fs.writeFileSync(target.key, key, { mode: 0o600, flag: "wx" });
  } catch (err) {
    throw fromSystemError(err, target.key);
  }
}

async function hashed(file: string): Promise<CopiedFile> {
  const hash = createHash("sha256");
  try {
    for await (const chunk of fs.createReadStream(file)) hash.update(chunk as Buffer);
    return { file, sha256: hash.digest("hex"), size: fs.statSync(file).size };
  } catch (err) {
    throw fromSystemError(err, file);
  }
}
