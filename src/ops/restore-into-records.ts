import fs from "node:fs";
import path from "node:path";
import { NO_KEYS, openArchive } from "../archive/age.js";
import { compatibility } from "../archive/compatibility.js";
import { ARCHIVE_FILES, type Manifest } from "../archive/manifest.js";
import { dataVolume } from "../config/data-volume.js";
import type { DatabaseSettings } from "../config/database-settings.js";
import { chooseEngine } from "../engine/choose-engine.js";
import type { RecordsRestore } from "../engine/engine.js";
import { LdsError } from "../errors.js";
import { ensureDirectory } from "../volume/open-volume.js";
import { openArchiveFile } from "./archive-file.js";
import { downloadArchive, type RestoreOptions } from "./restore.js";
import { extractAndCheckForRestore } from "./snapshot-checks.js";

/** The work folder's prefix in the command's data directory (the archive extracted and checked there). */
const WORK_PREFIX = "restore-into-records-";

export interface RecordsRestoreResult extends RecordsRestore {
  archive: string;
  manifest: Manifest;
  /** The archive is of an older schema: its copy was migrated before it was imported. */
  migrated: boolean;
}

/**
 * A restore into an engine whose records are not the volume's files (PostgreSQL, shared by replicas): the whole archive
 * verified as for any restore (extracted into a work folder of the command's data directory, removed at the end),
 * newer archives refused, the operator's confirmation, then the engine imports it in place of the live records while
 * no replica serves (Engine.restoreIntoRecords). Nothing is changed before the confirmation, nor when it fails.
 */
export async function restoreIntoRecords(options: RestoreOptions & { engine: DatabaseSettings }): Promise<RecordsRestoreResult> {
  const volume = dataVolume(options.dataDir, options.engine);
  const engine = chooseEngine(volume);
  if (!engine.restoreIntoRecords) throw new Error(`the ${engine.title} engine restores by replacing the volume's files, not into its records`);
  // A local archive that is not there is refused before the data directory is made.
  const local = options.download ? undefined : openArchiveFile(options.archive);
  ensureDirectory(volume.root);
  const work = fs.mkdtempSync(path.join(volume.root, WORK_PREFIX));
  try {
    const source = local ?? openArchiveFile(await downloadArchive(options.download!, work, options.signal));
    const { stream } = await openArchive(source.stream, options.keys ?? NO_KEYS);
    const manifest = await extractAndCheckForRestore(stream, work, options);
    if (!(await options.confirm(manifest))) throw new LdsError("cancelled", "Restore cancelled; nothing was changed.");
    if (options.signal?.aborted) throw new LdsError("interrupted", "Restore interrupted before anything was imported; nothing was changed.");
    const at = (name: string) => ({ file: path.join(work, name), name });
    const restored = await engine.restoreIntoRecords(volume, { records: at(ARCHIVE_FILES.db), vectors: at(ARCHIVE_FILES.vectors), key: at(ARCHIVE_FILES.key) }, manifest.partial);
    return { ...restored, archive: options.archive, manifest, migrated: compatibility(manifest).needsMigration };
  } finally {
    fs.rmSync(work, { recursive: true, force: true });
  }
}
