import path from "node:path";
import { dataVolume } from "../config/data-volume.js";
import type { DatabaseSettings } from "../config/database-settings.js";
import { chooseEngine, requireEngineWork } from "../engine/choose-engine.js";
import { LdsError } from "../errors.js";
import { setting } from "../hints.js";
import { exists } from "../util/files.js";
import type { Embedder } from "../vectors/embedder.js";
import { openVolume } from "../volume/open-volume.js";
import { lockVolumeExclusive, refuseWhileInUse } from "../locks/volume-locks.js";
import { rebuildVectors } from "./rebuild-vectors.js";

export interface IndexRebuilt {
  snippets: number;
  /** The embedder whose vectors the index holds now. */
  embedder: string;
  seconds: number;
}

/**
 * Rebuild the whole search index from the records (`lds index rebuild`): the words from the snippets' text, then
 * every vector from the embedder, page by page (ops/rebuild-vectors.ts). The index is derived data: nothing else
 * changes. With the server stopped, as for a key rotation: the volume's exclusive lock, refused while commands have
 * the volume open, since a server or a backup beside it would read an index being emptied and refilled. An
 * interrupted rebuild leaves the vectors stale: the next start (or this command again) rebuilds them.
 */
export async function rebuildIndex(dataDir: string, embedder: Embedder, onProgress?: (done: number, total: number) => void, engine?: DatabaseSettings): Promise<IndexRebuilt> {
  const volume = dataVolume(dataDir, engine);
  requireEngineWork(chooseEngine(volume), "search", "lds index rebuild");
  const records = chooseEngine(volume).files(volume).records;
  if (!exists(records)) {
    throw new LdsError("data_dir_invalid", `${volume.root} holds no LDS database (${path.basename(records)}): there is nothing to rebuild the index from.`, {
      hint: `Point ${setting("dataDir")} at the server's data volume.`,
    });
  }
  const started = Date.now();
  const lock = lockVolumeExclusive(volume, "index rebuild");
  refuseWhileInUse(volume, lock);
  try {
    const opened = await openVolume(volume.root, embedder, { engine: volume.engine, command: "lds index rebuild" });
    try {
      refuseForeignEmbedder(opened.index.builtBy, embedder.id);
      const snippets = await rebuildVectors(opened, onProgress, undefined, { force: true, words: true });
      return { snippets, embedder: embedder.id, seconds: (Date.now() - started) / 1000 };
    } finally {
      opened.close();
    }
  } finally {
    lock.release();
  }
}

/**
 * The vectors are rebuilt with this command's embedder (LDS_EMBEDDINGS_*): one other than the index was built with
 * would be rebuilt back by the server at its next start, so it is refused (the built-in hashing embedder's
 * versions replace each other, as at any start).
 */
function refuseForeignEmbedder(builtBy: string | undefined, mine: string): void {
  const hashing = (id: string | undefined) => id === undefined || id.startsWith("hashing-");
  if (builtBy === mine || (hashing(builtBy) && hashing(mine))) return;
  throw new LdsError("validation_error", `The search index was built with the embedder ${builtBy}; this command would embed with ${mine}. Nothing was changed.`, {
    hint: `Run it with the embedding settings the server runs with (${setting("embeddingsUrl")} and the other settings of its provider).`,
  });
}
