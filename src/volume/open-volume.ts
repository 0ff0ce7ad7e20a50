import fs from "node:fs";
import { dataVolume, type DataVolume } from "../config/data-volume.js";
import type { DatabaseSettings } from "../config/database-settings.js";
import { chooseEngine, requireEngineWork } from "../engine/choose-engine.js";
import type { Checkpointer, Engine, OpenedDatabases, OpenOptions, SearchLag } from "../engine/engine.js";
import { LdsError, fromSystemError } from "../errors.js";
import { action, setting } from "../hints.js";
import { exists } from "../util/files.js";
import type { Store } from "../store/store.js";
import { createHashingEmbedder, type Embedder } from "../vectors/embedder.js";
import type { SearchIndex } from "../index/search-index.js";
import { inlineSnippetWriter, type SnippetWriter } from "./snippet-writer.js";

/** A volume opened for its records only: what every engine can give (commands that need nothing else use it). */
export interface OpenRecords {
  /** Where its files are (DataVolume: paths only; this object is the opened volume). */
  paths: DataVolume;
  /** The engine that opened it (engine/engine.ts): engine work on this volume is asked of it. */
  engine: Engine;
  /** Every record of the volume, through the store's contract (store/store.ts). */
  store: Store;
  key: Buffer;
  /** Awaited by a command before it exits: a network engine ends its connections. */
  close(): void | Promise<void>;
}

export interface OpenVolume extends OpenRecords {
  /** The search index (index/search-index.ts): words and vectors, derived from the records. */
  index: SearchIndex;
  embedder: Embedder;
  /** Set by the server: ingestion and purge writes in a thread of their own (snippet-writer-thread.ts); else inline. */
  snippetWriter?: SnippetWriter;
  /** For the server: the databases' upkeep (SQLite: WAL checkpoints) in a thread of its own. */
  checkpointInThread(onFailure: (err: Error) => void): Checkpointer;
  /** An index that follows the records (PostgreSQL's replicas): how far behind it is. Absent: never behind. */
  searchLag?(): SearchLag;
}

export interface OpenVolumeOptions {
  /** Read through a memory map (the server). */
  mappedReads?: boolean;
  /** The volume's engine and its settings, parsed once (config/database-settings.ts). @default SQLite */
  engine?: DatabaseSettings;
  /** The command that opens it, named if its engine cannot (engine_unsupported). @default "this command" */
  command?: string;
  /**
   * What the search index is for (engine.ts, OpenOptions): "writes" for a command that only ingests, which then needs
   * the engine's `ingestion` work rather than `search` (PostgreSQL opens no search files for it). @default "ranking"
   */
  searchFor?: "ranking" | "writes";
  /** The engine's work in the background failed (a replica following the records): the server logs it. */
  onBackgroundError?: (err: Error) => void;
}

/**
 * Open the data volume: create the directory (mode 0700) on first use, then have its engine open and migrate the
 * databases, load or create secret.key and check that it belongs to them, and open the vector index.
 */
export async function openVolume(root: string, embedder: Embedder = createHashingEmbedder(), options: OpenVolumeOptions = {}): Promise<OpenVolume> {
  const volume = dataVolume(root, options.engine);
  const engine = chooseEngine(volume);
  const command = options.command ?? "this command";
  const searchFor = options.searchFor ?? "ranking";
  requireEngineWork(engine, searchFor === "writes" ? "ingestion" : "search", command);
  const opened = await openDatabases(volume, engine, { embedder, mappedReads: options.mappedReads, search: true, searchFor, command, onBackgroundError: options.onBackgroundError });
  const index = opened.index;
  if (!index) {
    await opened.close();
    throw new Error(`the ${engine.title} engine opened a volume without the search index it says it has`);
  }
  return {
    paths: volume,
    engine,
    store: opened.store,
    key: opened.key,
    index,
    embedder,
    checkpointInThread: opened.checkpointInThread,
    ...(opened.searchLag ? { searchLag: opened.searchLag } : {}),
    close: opened.close,
  };
}

/**
 * Open the volume for its records only (every engine can): the commands that manage accounts, keys and libraries'
 * records. Nothing else of the volume is opened.
 */
export async function openRecords(root: string, engine: DatabaseSettings | undefined, embedder: Embedder = createHashingEmbedder()): Promise<OpenRecords> {
  const volume = dataVolume(root, engine);
  const chosen = chooseEngine(volume);
  // The embedder matters to SQLite only, which opens its vector index beside the records.
  const opened = await openDatabases(volume, chosen, { embedder, search: false });
  return { paths: volume, engine: chosen, store: opened.store, key: opened.key, close: opened.close };
}

async function openDatabases(volume: DataVolume, engine: Engine, options: OpenOptions): Promise<OpenedDatabases> {
  ensureDirectory(volume.root);
  // Never open (or create) the databases while a restore is half done: their files are being moved (enter-volume.ts).
  if (exists(volume.restoreJournal)) {
    throw new LdsError("volume_locked", `${volume.root} holds an interrupted restore (${volume.restoreJournal}); it must be finished before the volume is opened.`, {
      hint: `Start ${action("restore.finish")} or any other command on this data volume: it finishes the restore first.`,
    });
  }
  return engine.open(volume, options);
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
