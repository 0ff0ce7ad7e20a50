import { resolveDataDir } from "../config/data-volume.js";
import { enterVolume } from "../ops/enter-volume.js";
import { openVolume, type OpenVolume } from "../volume/open-volume.js";
import { rebuildVectors } from "../ops/rebuild-vectors.js";

/**
 * Open the data volume for one short administrative command and close it afterwards. The volume is entered first
 * (an interrupted restore is finished, a running restore refused: enter-volume.ts). Commands that read or write
 * vectors ask for `vectors`: a stale index (after an upgrade) is rebuilt first, with a note on stderr.
 */
export async function withVolume<T>(dataDir: string | undefined, use: (volume: OpenVolume) => T | Promise<T>, needs: { vectors?: boolean; purpose?: string } = {}): Promise<T> {
  const root = resolveDataDir(dataDir);
  const entry = enterVolume(root, needs.purpose ?? process.argv.slice(2, 4).join(" "));
  try {
    for (const line of entry.recovered) process.stderr.write(`lds: ${line}\n`);
    const volume = openVolume(root);
    try {
      if (needs.vectors && volume.vectors.stale) {
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
