import fs from "node:fs";
import path from "node:path";
import type { DataVolume } from "../config/data-volume.js";
import { chooseEngine } from "../engine/choose-engine.js";
import { ARCHIVE_FILES } from "../archive/manifest.js";
import type { StagedSnapshot } from "../archive/write-archive.js";

/**
 * The online snapshot of a volume, laid out as the archive holds it: the engine copies its databases (vectors
 * first, then the records and the key: engine/engine.ts says why) while a server may keep writing, and describes
 * the copy. The steps are separate so that a backup can hash each copied file on another thread while the next
 * step runs (ops/backup.ts); snapshotVolume runs them in order.
 */
export async function snapshotVolume(volume: DataVolume, dir: string): Promise<StagedSnapshot> {
  await layOutSnapshot(volume, dir);
  let pinned!: (state?: string) => void;
  const vectorsPinned = new Promise<string | undefined>((resolve) => (pinned = resolve));
  let recordsTaken!: () => void;
  const recordsTook = new Promise<void>((resolve) => (recordsTaken = resolve));
  const vectorsCopied = chooseEngine(volume).snapshotVectors(volume, path.join(dir, ARCHIVE_FILES.vectors), { yieldToRequests: false, onPinned: pinned, recordsTaken: recordsTook });
  vectorsCopied.catch(() => {}); // awaited below
  try {
    // The records from the state the vectors were pinned at (PostgreSQL holds it until the records have taken it).
    await copyRecordsAndKey(volume, dir, await Promise.race([vectorsPinned, vectorsCopied.then(() => undefined)]));
  } finally {
    recordsTaken();
    await vectorsCopied.catch(() => {});
  }
  await vectorsCopied;
  return { dir, ...(await describeSnapshot(volume, dir)) };
}

/** Check that the volume is whole and make the archive's folders in `dir`. */
export async function layOutSnapshot(volume: DataVolume, dir: string): Promise<void> {
  await chooseEngine(volume).checkWhole(volume);
  for (const rel of Object.values(ARCHIVE_FILES)) fs.mkdirSync(path.dirname(path.join(dir, rel)), { recursive: true, mode: 0o700 });
}

/**
 * The records' copy and the key's, where the archive holds them; a key that is not the records' is refused. `pinned`:
 * the state the vectors' copy handed over (engine/engine.ts), to copy the records from.
 */
export async function copyRecordsAndKey(volume: DataVolume, dir: string, pinned?: string): Promise<void> {
  await chooseEngine(volume).snapshotRecords(volume, { records: path.join(dir, ARCHIVE_FILES.db), key: path.join(dir, ARCHIVE_FILES.key) }, pinned);
}

/** What the manifest says about the staged copy of the records, read from the copy itself. */
export async function describeSnapshot(volume: DataVolume, dir: string): Promise<Omit<StagedSnapshot, "dir">> {
  return chooseEngine(volume).describeSnapshot(path.join(dir, ARCHIVE_FILES.db));
}
