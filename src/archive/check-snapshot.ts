import path from "node:path";
import { chooseEngine, DEFAULT_ENGINE } from "../engine/choose-engine.js";
import type { Engine, NamedFile } from "../engine/engine.js";
import { ARCHIVE_FILES, archiveDamaged, type Manifest } from "./manifest.js";

export interface CheckResult {
  part: string;
  ok: true;
  detail: string;
}

export interface CheckOptions {
  /**
   * The records' own search index was checked on another thread (checkSearchIndexCopy) while the rest of the
   * archive streamed: check everything else here.
   */
  virtualTablesCheckedElsewhere?: boolean;
}

/** The engine whose files an archive carries: formats 1 and 2 hold SQLite's (a format for another engine would name it). */
export function archiveEngine(): Engine {
  return chooseEngine({ engine: { name: DEFAULT_ENGINE } });
}

/** An extracted archive file, named by its path in the archive (as errors and reports name it). */
export const extracted = (dir: string, rel: string): NamedFile => ({ file: path.join(dir, rel), name: rel });

/**
 * Check extracted snapshots beyond their checksums: a checksum proves the bytes are the ones written at backup
 * time, the engine's checks prove those bytes are usable databases and a usable key, of the schema the manifest says.
 */
export async function checkExtractedSnapshot(dir: string, manifest: Manifest, options: CheckOptions = {}): Promise<CheckResult[]> {
  const copies = { records: extracted(dir, ARCHIVE_FILES.db), vectors: extracted(dir, ARCHIVE_FILES.vectors), key: extracted(dir, ARCHIVE_FILES.key) };
  const checked = await archiveEngine().checkArchiveCopies(copies, { searchIndexCheckedElsewhere: options.virtualTablesCheckedElsewhere ?? false });
  if (checked.schemaVersion !== manifest.schemaVersion) {
    throw archiveDamaged(`${ARCHIVE_FILES.db} has schema version ${checked.schemaVersion}, the manifest says ${manifest.schemaVersion}`);
  }
  return [
    { part: ARCHIVE_FILES.db, ok: true, detail: checked.details.records },
    { part: ARCHIVE_FILES.vectors, ok: true, detail: checked.details.vectors },
    { part: ARCHIVE_FILES.key, ok: true, detail: checked.details.key },
  ];
}
