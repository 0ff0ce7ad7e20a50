import type pg from "pg";
import type { DataVolume } from "../../config/data-volume.js";
import type { PostgresSettings } from "../../config/database-settings.js";
import { LdsError } from "../../errors.js";
import { setting } from "../../hints.js";
import { keyFingerprint, loadSharedKey } from "../../secrets/key-file.js";
import { openPostgresStore } from "../../store/postgres/postgres-store.js";
import { FINGERPRINT_SETTING, getSetting } from "../../store/postgres/settings.js";
import { sqlOn } from "../../store/postgres/sql.js";
import { exists } from "../../util/files.js";
import { finishKeyReplacement, nextKeyFile } from "./shared-key-file.js";
import { openPool, type PoolSettings } from "../../store/postgres/pool.js";
import type { Store } from "../../store/store.js";
import type { OpenedDatabases, OpenOptions } from "../engine.js";
import { startSearchReplica, type SearchReplica } from "./search-replica.js";
import { loadingHeldSnippets } from "./held-snippet-loads.js";
import { holdServingLock, readServingMarker, type ServingHold, type ServingMarker } from "./serving-hold.js";
import { parseVectorsEmbedder, sameEmbedder, VECTORS_EMBEDDER_SETTING, vectorsEmbedderValue } from "./vectors-embedder.js";
import { writesOnlySearchIndex } from "./writes-only-index.js";
import { ingestingStore } from "./ingesting-store.js";

/** The pool's settings from the volume's parsed database settings. */
export function poolSettingsOf(settings: PostgresSettings): PoolSettings {
  return {
    url: settings.url,
    max: settings.poolMax,
    connectTimeoutMs: settings.connectTimeoutMs,
    statementTimeoutMs: settings.statementTimeoutMs,
    tlsCa: settings.tls.ca,
  };
}

export function postgresSettingsOf(volume: DataVolume): PostgresSettings {
  if (volume.engine.name !== "postgres") throw new Error(`the PostgreSQL engine was asked to open a ${volume.engine.name} volume`);
  return volume.engine;
}

/**
 * Open the records in PostgreSQL: read the shared key first (never created: key_missing or key_insecure before any
 * connection), make the pool and migrate (openPostgresStore: database_unreachable within the connect timeout,
 * schema_too_new untouched), then check the key against the fingerprint the database records. With `search` (the
 * server), this replica's search files under the data directory are caught up with the records before this answers,
 * then followed (engine/postgres/search-replica.ts); their index is the volume's. With `searchFor: "writes"` (a
 * command's ingestion) no search file is opened and nothing followed: its index takes no part (writes-only-index.ts),
 * its batches reach the replicas through the records; it holds the serving lock as a replica does.
 */
export async function openPostgresDatabases(volume: DataVolume, options: OpenOptions): Promise<OpenedDatabases> {
  const settings = postgresSettingsOf(volume);
  // Without a key waiting beside the file, the key is read before any connection (key_missing, key_insecure first).
  const waiting = exists(nextKeyFile(settings.keyFile));
  let key = waiting ? undefined : loadSharedKey(settings.keyFile);
  // The pool is made here, not by the store, because the search replica's fetches share it.
  const pool = openPool(poolSettingsOf(settings));
  let replica: SearchReplica | undefined;
  let hold: ServingHold | undefined;
  const writesOnly = options.search !== false && options.searchFor === "writes";
  try {
    if (options.search !== false) {
      // Only the server (and a command's ingestion, writes only) opens the search side on PostgreSQL: it serves under
      // the shared serving lock, taken before the key is checked, so that a rotation or a restore's swap commits
      // either before the check (which then sees its key) or after this replica stops serving, never in between. A
      // command's ingestion holds it named as the command: a restore's refusal then says what holds it.
      hold = await holdServingLock(pool, (err) => options.onBackgroundError?.(err instanceof Error ? err : new Error(String(err))), options.command ?? "lds serve");
    }
    if (!key) {
      // A rotation or restore that committed and was cut off before its key's rename is finished first.
      finishKeyReplacement(settings.keyFile, await recordedFingerprint(pool, settings));
      key = loadSharedKey(settings.keyFile);
    }
    const opened = await openPostgresStore({ pool, url: settings.url }, key);
    await checkKeyBelongs(opened.store, key, settings);
    let cutOff: CutOff | undefined;
    if (hold) cutOff = watchForChangesWhileCutOff(hold, await readServingMarker((text) => pool.query<ServingMarker>(text)), settings, options.onBackgroundError);
    if (options.search !== false) {
      // The server writes the vectors (its ingestions), as does a command's ingestion: the first to open the database
      // records which embedder makes them, which a backup labels the archive's vectors with and a restore checks
      // (vectors-embedder.ts).
      const recorded = await opened.store.settings.putIfAbsent(VECTORS_EMBEDDER_SETTING, vectorsEmbedderValue(options.embedder));
      if (writesOnly) checkSameEmbedder(recorded, options);
    }
    if (options.search !== false && !writesOnly) {
      replica = await startSearchReplica({
        pool,
        url: settings.url,
        dataDir: volume.root,
        embedder: { id: options.embedder.id, dimensions: options.embedder.dimensions },
        connectTimeoutMs: settings.connectTimeoutMs,
        onError: (err) => options.onBackgroundError?.(err instanceof Error ? err : new Error(String(err))),
      });
    }
    const searching = replica;
    const serving = hold;
    return {
      store: searching ? loadingHeldSnippets(opened.store, searching.loadHeld) : writesOnly && serving ? ingestingStore(opened.store, serving) : opened.store,
      key,
      // Cut off while the records were restored or the key rotated: never ready again (the key it holds is not theirs).
      ...(searching ? { index: searching.index, searchLag: () => (cutOff?.happened() ? { ...searching.lag(), caughtUp: false } : searching.lag()) } : {}),
      ...(writesOnly ? { index: writesOnlySearchIndex(options.command ?? "this command", options.embedder) } : {}),
      // PostgreSQL does its own upkeep (autovacuum, checkpoints), and the search files are written in small steps by
      // their follower alone: nothing to run beside the server.
      checkpointInThread: () => ({ close: async () => {} }),
      close: async () => {
        cutOff?.stop();
        await searching?.close();
        await serving?.close();
        await pool.end();
      },
    };
  } catch (err) {
    await hold?.close();
    await pool.end();
    throw err;
  }
}

/**
 * A command writes vectors beside the replicas' own: with another embedder than the one the records' vectors were
 * made by (the servers' LDS_EMBEDDINGS_* not in its environment), its batches would be searched with the wrong
 * vectors. Refused before anything is written.
 */
function checkSameEmbedder(recorded: string, options: OpenOptions): void {
  const maker = parseVectorsEmbedder(recorded);
  if (!maker || sameEmbedder(maker, options.embedder)) return;
  throw new LdsError(
    "validation_error",
    `The records' vectors were made by the embedder ${maker.id} (${maker.dimensions} dimensions); this command would embed with ${options.embedder.id} (${options.embedder.dimensions}).`,
    {
      hint: `Run the command with the servers' embedding settings (${setting("embeddingsUrl")} and the settings beside it).`,
    },
  );
}

/** The fingerprint the live schema records, if it has one yet (a new database has no settings table). */
async function recordedFingerprint(pool: pg.Pool, settings: PostgresSettings): Promise<string | undefined> {
  const sql = sqlOn(pool, settings.endpoint);
  const exists = await sql.row("SELECT 1 FROM pg_class WHERE relname = 'settings' AND relnamespace = current_schema()::regnamespace");
  return exists ? getSetting(sql, FINGERPRINT_SETTING) : undefined;
}

/**
 * The first replica to open an empty database records its key's fingerprint; every later one must hold the same
 * key. Insert-if-absent: of two replicas starting at once with different keys, one records its fingerprint and the
 * other reads it back and is refused, so secrets are never sealed with two keys.
 */
async function checkKeyBelongs(store: Store, key: Buffer, settings: PostgresSettings): Promise<void> {
  const mine = keyFingerprint(key);
  const recorded = await store.settings.putIfAbsent(FINGERPRINT_SETTING, mine);
  if (recorded === mine) return;
  throw new LdsError("key_missing", `${settings.keyFile} is not the key the database at ${settings.endpoint.host}:${settings.endpoint.port} was sealed with.`, {
    hint: `Give this replica a copy of the key file the other replicas use (${setting("secretKeyFile")}): every replica of one database shares one key.`,
  });
}

/** How often a replica cut off by a restore or a rotation says so again in its log. */
const CUT_OFF_REPEAT_MS = 60_000;

interface CutOff {
  happened(): boolean;
  stop(): void;
}

/**
 * A replica whose serving lock was retaken after the database came back, and found the key fingerprint or the live
 * schema changed (a rotation or a restore ran while it was cut off), holds a key the records are no longer sealed with:
 * it stops reporting ready and says why in its log at once and every minute, until it is restarted with the new key.
 */
function watchForChangesWhileCutOff(hold: ServingHold, opened: ServingMarker, settings: PostgresSettings, report: OpenOptions["onBackgroundError"]): CutOff {
  let happened = false;
  let repeat: NodeJS.Timeout | undefined;
  const tell = () =>
    report?.(
      new Error(
        `The records at ${settings.endpoint.host}:${settings.endpoint.port} were restored or their shared key rotated while this replica was cut off from the database: it no longer reports ready. Restart it with the key file the database uses now.`,
      ),
    );
  hold.watch(opened, () => {
    happened = true;
    tell();
    repeat = setInterval(tell, CUT_OFF_REPEAT_MS);
    repeat.unref();
  });
  return { happened: () => happened, stop: () => clearInterval(repeat) };
}
