import fs from "node:fs";
import path from "node:path";
import { extractAndCheckForRestore } from "./snapshot-checks.js";
import { compatibility } from "../archive/compatibility.js";
import { ARCHIVE_FILES, type Manifest } from "../archive/manifest.js";
import { dataVolume, fileTimestamp } from "../config/data-volume.js";
import { pipeline } from "node:stream/promises";
import type { Destination } from "../destinations/destination.js";
import { LdsError, fromSystemError } from "../errors.js";
import { exists, fsyncDirectory, fsyncFile } from "../util/files.js";
import { failpoint, stallpoint } from "../util/failpoint.js";
import { lockVolumeExclusive, refuseWhileInUse } from "../locks/volume-locks.js";
import { openArchiveFile } from "./archive-file.js";
import { NO_KEYS, openArchive, type ArchiveKeys } from "../archive/age.js";
import { ensureDirectory } from "../volume/open-volume.js";
import { archiveEngine } from "../archive/check-snapshot.js";
import { chooseEngine } from "../engine/choose-engine.js";
import { RESTORE_WORK_PREFIX, completeRestore, recoverInterruptedRestore, writeJournal, type RecoveryReport, type RestoreJournal } from "./restore-journal.js";

export interface RestoreOptions {
  dataDir: string;
  /** The archive file, or for display the remote location when `download` is given. */
  archive: string;
  /** Fetch the archive from a destination into the restore's work folder on the data volume first. */
  download?: { destination: Destination; name: string };
  /** Asked once the archive is fully verified, before anything is replaced. Return false to cancel. */
  confirm: (manifest: Manifest) => Promise<boolean>;
  signal?: AbortSignal;
  onProgress?: (bytes: number, totalBytes: number) => void;
  /** The caller (a starting server applying a staged restore) already holds server.lock. */
  underServerLock?: boolean;
  /** Identities and passphrases for an age-encrypted archive. */
  keys?: ArchiveKeys;
}

export interface RestoreResult {
  archive: string;
  manifest: Manifest;
  /** Where the replaced files were moved; null when the volume was empty. */
  preRestoreDir: string | null;
  requeued: string[];
  needsMigration: boolean;
  recovery: RecoveryReport;
}

/**
 * The offline restore (spec rules 1-5, issue 3 rules 1-7): refuse while a server holds the volume; verify the
 * whole archive and refuse newer ones before touching anything; confirm; move the current files into
 * pre-restore-<time>/ and put the restored ones in place through the crash-safe journal.
 */
export async function restore(options: RestoreOptions): Promise<RestoreResult> {
  const volume = dataVolume(options.dataDir);
  ensureDirectory(volume.root);
  const lock = options.underServerLock ? null : lockVolumeExclusive(volume, "restore");
  if (lock) refuseWhileInUse(volume, lock);
  let work: string | undefined;
  try {
    const recovery = recoverInterruptedRestore(volume);
    work = fs.mkdtempSync(path.join(volume.root, RESTORE_WORK_PREFIX));
    const local = options.download ? await downloadArchive(options.download, work, options.signal) : options.archive;
    const { stream } = await openArchive(openArchiveFile(local).stream, options.keys ?? NO_KEYS);
    const manifest = await extractAndCheckForRestore(stream, work, options);
    if (!(await options.confirm(manifest))) {
      throw new LdsError("cancelled", "Restore cancelled; nothing was changed.");
    }
    if (options.signal?.aborted) throw new LdsError("interrupted", "Restore interrupted before any file was replaced; nothing was changed.");

    let requeued: string[];
    try {
      requeued = await archiveEngine().prepareRestored({ records: path.join(work, ARCHIVE_FILES.db), vectors: path.join(work, ARCHIVE_FILES.vectors) }, manifest.partial);
      // Before the point of no return, everything staged must be on disk: files, their folders, the work folder.
      syncStaged(work);
    } catch (err) {
      throw fromSystemError(err, "the restored databases (nothing was replaced)");
    }
    const hadData = [...Object.values(chooseEngine(volume).files(volume)), volume.key].some(exists);
    const journal: RestoreJournal = {
      version: 1,
      phase: "prepared",
      archive: path.resolve(options.archive),
      startedAt: new Date().toISOString(),
      work,
      preRestoreDir: freePreRestoreDir(volume.root),
    };
    stallpoint("restore-hold-before-swap", 10_000);
    failpoint("restore-before-journal");
    // The point of no return: from here a crash is finished by the next lds-restore or lds serve.
    writeJournal(volume, journal);
    failpoint("restore-journal-written");
    completeRestore(volume, journal);
    work = undefined;
    return {
      archive: options.archive,
      manifest,
      preRestoreDir: hadData ? journal.preRestoreDir : null,
      requeued,
      needsMigration: compatibility(manifest).needsMigration,
      recovery,
    };
  } finally {
    if (work) fs.rmSync(work, { recursive: true, force: true });
    lock?.release();
  }
}

/** Download into the work folder (same filesystem as the data, removed with it); resumes dropped connections. */
export async function downloadArchive(source: { destination: Destination; name: string }, work: string, signal?: AbortSignal): Promise<string> {
  const file = path.join(work, "download.tar");
  const body = await source.destination.get(source.name, { signal });
  try {
    await pipeline(body, fs.createWriteStream(file, { flags: "wx", mode: 0o600 }), { signal });
  } catch (err) {
    if (signal?.aborted) throw new LdsError("interrupted", "Restore interrupted while downloading; nothing was changed.");
    throw err instanceof LdsError ? err : fromSystemError(err, `the download of ${source.name}`);
  }
  return file;
}

function syncStaged(work: string): void {
  for (const rel of Object.values(ARCHIVE_FILES)) {
    fsyncFile(path.join(work, rel));
    fsyncDirectory(path.dirname(path.join(work, rel)));
  }
  fsyncDirectory(work);
  fsyncDirectory(path.dirname(work));
}

function freePreRestoreDir(root: string): string {
  const base = path.join(root, `pre-restore-${fileTimestamp()}`);
  let candidate = base;
  for (let i = 2; exists(candidate); i++) candidate = `${base}-${i}`;
  return candidate;
}
