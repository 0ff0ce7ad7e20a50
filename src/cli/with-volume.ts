import { resolveDataDir } from "../config/data-volume.js";
import { enterVolume } from "../ops/enter-volume.js";
import { openRecords, openVolume, type OpenRecords, type OpenVolume } from "../volume/open-volume.js";
import { rebuildVectors } from "../ops/rebuild-vectors.js";
import { embeddingSettingsFromEnv } from "../config/embedding-settings.js";
import { LdsError } from "../errors.js";
import { embedderFor } from "../vectors/embedder-for.js";
import { commandDatabase, requireCommandWork } from "./database.js";

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

/** What a command says about itself: `purpose` is recorded while it uses the volume, `command` names it in refusals. */
interface CommandNeeds {
  purpose?: string;
  /** As operators type it ("lds ingest git"). @default "lds " + the purpose */
  command?: string;
}

/** What a command asks of the search index: rankings (search, context), or only the writes of an ingestion. */
interface IndexNeeds {
  vectors?: boolean;
  /** "writes": the command ranks nothing (an ingestion), which an engine without local search files can do. */
  searchFor?: "ranking" | "writes";
}

/**
 * Open the data volume for one short administrative command and close it afterwards. The volume is entered first
 * (an interrupted restore is finished, a running restore refused: enter-volume.ts). Commands that read or write
 * vectors ask for `vectors`: a stale index (after an upgrade) is rebuilt first, with a note on stderr. The search
 * index is needed here: an engine without one for rankings (PostgreSQL, so far) is refused before anything is
 * taken, unless the command only writes (`searchFor: "writes"`) and the engine can ingest.
 */
export async function withVolume<T>(dataDir: string | undefined, use: (volume: OpenVolume) => T | Promise<T>, needs: CommandNeeds & IndexNeeds = {}): Promise<T> {
  const purpose = needs.purpose ?? process.argv.slice(2, 4).join(" ");
  const command = needs.command ?? `lds ${purpose}`;
  const searchFor = needs.searchFor ?? "ranking";
  requireCommandWork(searchFor === "writes" ? "ingestion" : "search", command);
  return entered(dataDir, purpose, async (root) => {
    // The same embedder as the server (LDS_EMBEDDINGS_*), so that both write comparable vectors.
    const volume = await openVolume(root, embedderFor(embeddingSettingsFromEnv(process.env)), { engine: commandDatabase(), command, searchFor });
    try {
      if (needs.vectors && volume.index.stale) {
        refuseForeignEmbedder(volume);
        process.stderr.write("lds: rebuilding the vector index from the snippets (first use after an upgrade or a restore)...\n");
        await rebuildVectors(volume);
      }
      return await use(volume);
    } finally {
      await volume.close();
    }
  });
}

/**
 * Open only the records of the data volume for one short command (accounts, keys, libraries' records, the audit
 * log), on whichever engine the settings choose, and close them afterwards. Entered as withVolume enters it.
 */
export async function withRecords<T>(dataDir: string | undefined, use: (records: OpenRecords) => T | Promise<T>, needs: CommandNeeds = {}): Promise<T> {
  return entered(dataDir, needs.purpose ?? process.argv.slice(2, 4).join(" "), async (root) => {
    const records = await openRecords(root, commandDatabase(), embedderFor(embeddingSettingsFromEnv(process.env)));
    try {
      return await use(records);
    } finally {
      await records.close();
    }
  });
}

/** Run `work` inside the volume (enter-volume.ts), telling the operator what entering it recovered first. */
async function entered<T>(dataDir: string | undefined, purpose: string, work: (root: string) => Promise<T>): Promise<T> {
  const root = resolveDataDir(dataDir, process.env);
  const entry = enterVolume(root, purpose);
  try {
    for (const line of entry.recovered) process.stderr.write(`lds: ${line}\n`);
    return await work(root);
  } finally {
    entry.leave();
  }
}
