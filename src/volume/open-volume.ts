import fs from "node:fs";
import { dataVolume, type DataVolume } from "../config/data-volume.js";
import { chooseEngine } from "../engine/choose-engine.js";
import type { Checkpointer, Engine } from "../engine/engine.js";
import { LdsError, fromSystemError } from "../errors.js";
import { action, setting } from "../hints.js";
import { exists } from "../util/files.js";
import type { Store } from "../store/store.js";
import { createHashingEmbedder, type Embedder } from "../vectors/embedder.js";
import type { SearchIndex } from "../index/search-index.js";
import { inlineSnippetWriter, type SnippetWriter } from "./snippet-writer.js";

export interface OpenVolume {
  /** Where its files are (DataVolume: paths only; this object is the opened volume). */
  paths: DataVolume;
  /** The engine that opened it (engine/engine.ts): engine work on this volume is asked of it. */
  engine: Engine;
  /** Every record of the volume, through the store's contract (store/store.ts). */
  store: Store;
  key: Buffer;
  /** The search index (index/search-index.ts): words and vectors, derived from the records. */
  index: SearchIndex;
  embedder: Embedder;
  /** Set by the server: ingestion and purge writes in a thread of their own (snippet-writer-thread.ts); else inline. */
  snippetWriter?: SnippetWriter;
  /** For the server: the databases' upkeep (SQLite: WAL checkpoints) in a thread of its own. */
  checkpointInThread(onFailure: (err: Error) => void): Checkpointer;
  close(): void;
}

export interface OpenVolumeOptions {
  /** Read through a memory map (the server). */
  mappedReads?: boolean;
  /** The volume's engine, from its parsed settings. @default sqlite */
  engine?: string;
}

/**
 * Open the data volume: create the directory (mode 0700) on first use, then have its engine open and migrate the
 * databases, load or create secret.key and check that it belongs to them, and open the vector index.
 */
export async function openVolume(root: string, embedder: Embedder = createHashingEmbedder(), options: OpenVolumeOptions = {}): Promise<OpenVolume> {
  const volume = dataVolume(root, { engine: options.engine });
  const engine = chooseEngine(volume);
  ensureDirectory(volume.root);
  // Never open (or create) the databases while a restore is half done: their files are being moved (enter-volume.ts).
  if (exists(volume.restoreJournal)) {
    throw new LdsError("volume_locked", `${volume.root} holds an interrupted restore (${volume.restoreJournal}); it must be finished before the volume is opened.`, {
      hint: `Start ${action("restore.finish")} or any other command on this data volume: it finishes the restore first.`,
    });
  }
  const opened = await engine.open(volume, { embedder, mappedReads: options.mappedReads });
  return {
    paths: volume,
    engine,
    store: opened.store,
    key: opened.key,
    index: opened.index,
    embedder,
    checkpointInThread: opened.checkpointInThread,
    close: opened.close,
  };
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
