import { resolveDataDir } from "../../config/data-volume.js";
import { embeddingSettingsFromEnv } from "../../config/embedding-settings.js";
import { rebuildIndex } from "../../ops/rebuild-index.js";
import { embedderFor } from "../../vectors/embedder-for.js";
import { commandDatabase, requireCommandWork } from "../database.js";

/** Progress on stderr at most this often: a large volume takes minutes, and the operator should see it move. */
const PROGRESS_MS = 2000;

/** `lds index rebuild`: the whole search index (words and vectors) again from the snippets, server stopped. */
export async function run(argv: { dataDir?: string; json: boolean }): Promise<number> {
  requireCommandWork("search", "lds index rebuild");
  // The same embedder as the server (LDS_EMBEDDINGS_*), so that the server finds the vectors it would write.
  const embedder = embedderFor(embeddingSettingsFromEnv(process.env));
  let last = 0;
  const result = await rebuildIndex(
    resolveDataDir(argv.dataDir, process.env),
    embedder,
    (done, total) => {
      if (Date.now() - last < PROGRESS_MS && done < total) return;
      last = Date.now();
      process.stderr.write(`lds: search index: ${done} of ${total} snippets embedded\n`);
    },
    commandDatabase(),
  );
  if (argv.json) {
    process.stdout.write(JSON.stringify(result) + "\n");
    return 0;
  }
  process.stdout.write(
    `Rebuilt the search index from the records: the words and the vectors of ${result.snippets} snippet${result.snippets === 1 ? "" : "s"} (embedder ${result.embedder}) in ${result.seconds.toFixed(1)} s.\n`,
  );
  return 0;
}
