import { resolveDataDir } from "../config/data-volume.js";
import { enterVolume } from "../ops/enter-volume.js";
import { openVolume, type OpenVolume } from "../volume/open-volume.js";
import { rebuildVectors } from "../ops/rebuild-vectors.js";
import { embeddingSettingsFromEnv } from "../config/embedding-settings.js";
import { LdsError } from "../errors.js";
import { embedderFor } from "../vectors/embedder-for.js";

/**
 * A command run with other embedding settings than the index was built with (the server's LDS_EMBEDDINGS_* not in
 * the command's environment) must not rebuild the index with its own: the server would rebuild it back. An
 * upgrade of the built-in hashing embedder, or an unfinished rebuild, is rebuilt as before.
 */
function refuseForeignEmbedder(volume: OpenVolume): void {
  const builtBy = volume.index.builtBy;
  const hashing = (id: string | undefined) => id === undefined || id.startsWith("hashing-");
  if (builtBy === volume.embedder.id || (hashing(builtBy) && hashing(volume.embedder.id))) return;
  throw new LdsError("validation_error", `The vector index was built by the embedder ${builtBy}; this command would embed with ${volume.embedder.id}.`, {
    hint: "Run the command with the server's LDS_EMBEDDINGS_* settings (or let the server finish its rebuild).",
  });
}

/**
 * Open the data volume for one short administrative command and close it afterwards. The volume is entered first
 * (an interrupted restore is finished, a running restore refused: enter-volume.ts). Commands that read or write
 * vectors ask for `vectors`: a stale index (after an upgrade) is rebuilt first, with a note on stderr.
 */
export async function withVolume<T>(dataDir: string | undefined, use: (volume: OpenVolume) => T | Promise<T>, needs: { vectors?: boolean; purpose?: string } = {}): Promise<T> {
  const root = resolveDataDir(dataDir, process.env);
  const entry = enterVolume(root, needs.purpose ?? process.argv.slice(2, 4).join(" "));
  try {
    for (const line of entry.recovered) process.stderr.write(`lds: ${line}\n`);
    // The same embedder as the server (LDS_EMBEDDINGS_*), so that both write comparable vectors.
    const volume = await openVolume(root, embedderFor(embeddingSettingsFromEnv(process.env)));
    try {
      if (needs.vectors && volume.index.stale) {
        refuseForeignEmbedder(volume);
        process.stderr.write("lds: rebuilding the vector index from the snippets (first use after an upgrade or a restore)...\n");
        await rebuildVectors(volume);
      }
      return await use(volume);
    } finally {
      volume.close();
    }
  } finally {
    entry.leave();
  }
}
