import fs from "node:fs";
import path from "node:path";
import type { DataVolume } from "../config/data-volume.js";
import { chooseEngine } from "../engine/choose-engine.js";
import { LdsError } from "../errors.js";
import { ARCHIVE_FILES } from "../archive/manifest.js";
import { exists, fsyncDirectory, writeFileAtomic } from "../util/files.js";
import { failpoint } from "../util/failpoint.js";

/**
 * The restore journal makes the swap of files crash-safe. It is written only once the new files are verified
 * and complete in `work`, so from then on the restore can always be finished (rolled forward):
 *   prepared  → move every live file into preRestoreDir → moved-out → move the new files in → journal removed.
 * Each move is one rename within the data volume, and each phase is idempotent, so re-running a phase after a
 * crash at any point converges on the fully restored volume. Without a journal, the volume is untouched.
 */
export interface RestoreJournal {
  version: 1;
  phase: "prepared" | "moved-out";
  archive: string;
  startedAt: string;
  /** Folder holding the verified new files (layout of the archive). */
  work: string;
  preRestoreDir: string;
}

export const RESTORE_WORK_PREFIX = "restore-work-";

/** Where each file of the archive goes in the data volume. */
export function restoreTargets(volume: DataVolume): Array<[string, string]> {
  const databases = chooseEngine(volume).files(volume);
  return [
    [ARCHIVE_FILES.db, databases.records],
    [ARCHIVE_FILES.vectors, databases.vectors],
    [ARCHIVE_FILES.key, volume.key],
  ];
}

export function writeJournal(volume: DataVolume, journal: RestoreJournal): void {
  writeFileAtomic(volume.restoreJournal, JSON.stringify(journal, null, 2) + "\n");
}

export function readJournal(volume: DataVolume): RestoreJournal | null {
  let text: string;
  try {
    text = fs.readFileSync(volume.restoreJournal, "utf8");
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "ENOENT") return null;
    throw err;
  }
  try {
    const journal = JSON.parse(text) as RestoreJournal;
    if (journal.version === 1 && (journal.phase === "prepared" || journal.phase === "moved-out")) return journal;
  } catch {
    // fall through: a journal is written atomically, so an unreadable one was not written by us
  }
  throw new LdsError("data_dir_invalid", `${volume.restoreJournal} is unreadable, so an interrupted restore cannot be finished.`, {
    hint: "Inspect the restore-work-* and pre-restore-* folders in the data volume, or restore again from the archive.",
  });
}

/** Carry a journaled restore to the end. Safe to call again after a crash at any point. */
export function completeRestore(volume: DataVolume, journal: RestoreJournal): void {
  if (journal.phase === "prepared") {
    // Nothing has been moved in this phase yet, so every new file must still be in the work folder.
    const missing = restoreTargets(volume).filter(([rel]) => !exists(path.join(journal.work, rel)));
    if (missing.length > 0) {
      throw new LdsError("data_dir_invalid", `The interrupted restore lost its staged files (${missing.map(([r]) => r).join(", ")}).`, {
        hint: `Nothing was replaced yet; delete ${volume.restoreJournal} and restore again from ${journal.archive}.`,
      });
    }
    fs.mkdirSync(journal.preRestoreDir, { recursive: true, mode: 0o700 });
    for (const file of chooseEngine(volume).liveFiles(volume)) {
      if (exists(file)) fs.renameSync(file, freeName(path.join(journal.preRestoreDir, path.basename(file))));
      failpoint("restore-moving-out");
    }
    fsyncDirectory(journal.preRestoreDir);
    fsyncDirectory(volume.root);
    journal = { ...journal, phase: "moved-out" };
    writeJournal(volume, journal);
    failpoint("restore-moved-out");
  }
  for (const [rel, live] of restoreTargets(volume)) {
    const staged = path.join(journal.work, rel);
    if (exists(staged)) fs.renameSync(staged, live);
    failpoint("restore-moving-in");
  }
  fsyncDirectory(volume.root);
  fs.rmSync(volume.restoreJournal, { force: true });
  fsyncDirectory(volume.root);
  fs.rmSync(journal.work, { recursive: true, force: true });
}

export interface RecoveryReport {
  /** A restore interrupted after its point of no return was finished. */
  finished: { archive: string; preRestoreDir: string } | null;
  /** Work folders of restores interrupted before that point were removed (the volume was never touched). */
  discarded: string[];
}

/**
 * Run before anything opens the volume (lds serve, lds-restore), while holding server.lock: finish a restore
 * that passed its point of no return, and discard leftovers of restores that had not.
 */
export function recoverInterruptedRestore(volume: DataVolume): RecoveryReport {
  const report: RecoveryReport = { finished: null, discarded: [] };
  const journal = readJournal(volume);
  if (journal) {
    completeRestore(volume, journal);
    report.finished = { archive: journal.archive, preRestoreDir: journal.preRestoreDir };
  }
  for (const entry of fs.readdirSync(volume.root)) {
    if (!entry.startsWith(RESTORE_WORK_PREFIX)) continue;
    fs.rmSync(path.join(volume.root, entry), { recursive: true, force: true });
    report.discarded.push(entry);
  }
  return report;
}

export function describeRecovery(report: RecoveryReport): string[] {
  const lines: string[] = [];
  if (report.finished) {
    lines.push(`Finished an interrupted restore from ${report.finished.archive}: the data volume now holds the restored data; ` + `the previous data is in ${report.finished.preRestoreDir}.`);
  }
  if (report.discarded.length > 0) {
    lines.push(`Discarded ${report.discarded.length} unfinished restore folder(s) from before their point of no return; the data was not changed.`);
  }
  return lines;
}

/**
 * Never overwrite what an earlier run of this phase already moved aside: a file found live again was created
 * after the interruption (by a process that ignored the journal), and is kept beside the original instead.
 */
function freeName(target: string): string {
  if (!exists(target)) return target;
  let n = 1;
  while (exists(`${target}.after-interruption-${n}`)) n++;
  return `${target}.after-interruption-${n}`;
}
