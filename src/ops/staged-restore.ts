import fs from "node:fs";
import path from "node:path";
import { fileTimestamp, type DataVolume } from "../config/data-volume.js";
import { describeFailure } from "../errors.js";
import { fsyncDirectory, fsyncFile, writeFileAtomic } from "../util/files.js";
import { restore, type RestoreResult } from "./restore.js";

/**
 * A restore chosen in the dashboard cannot swap the live database under a running server, so it is staged:
 * restore-staged/archive.tar plus request.json, and applied at the next start, before the store opens, by the
 * same `restore` code as lds-restore (verification, newer-version refusal, pre-restore move, journal).
 */
const ARCHIVE = "archive.tar";
const REQUEST = "request.json";

export interface StageRequest {
  /** The archive file to stage. */
  file: string;
  /** Move instead of copy (an upload or a download that is no longer needed). */
  move: boolean;
  /** Where it came from, for the log: an archive name, s3:// URL or "upload". */
  source: string;
  requestedBy: string;
}

/** Stage an archive; answers the time it was staged, which names this request in the outcome record. */
export function stageRestore(volume: DataVolume, request: StageRequest): { stagedAt: string } {
  const stagedAt = new Date().toISOString();
  const temp = `${volume.restoreStaged}.tmp-${process.pid}`;
  fs.rmSync(temp, { recursive: true, force: true });
  fs.mkdirSync(temp, { mode: 0o700 });
  const target = path.join(temp, ARCHIVE);
  if (request.move) fs.renameSync(request.file, target);
  else fs.copyFileSync(request.file, target);
  fs.chmodSync(target, 0o600);
  fsyncFile(target);
  writeFileAtomic(path.join(temp, REQUEST), JSON.stringify({ source: request.source, requestedBy: request.requestedBy, stagedAt }, null, 2));
  // A newer request replaces an older one that was never applied.
  fs.rmSync(volume.restoreStaged, { recursive: true, force: true });
  fs.renameSync(temp, volume.restoreStaged);
  fsyncDirectory(volume.root);
  return { stagedAt };
}

export function hasStagedRestore(volume: DataVolume): boolean {
  return fs.existsSync(path.join(volume.restoreStaged, ARCHIVE));
}

/** What request.json says of the staged restore (informative: a missing or damaged file is not an error). */
interface StagedRequest {
  source: string;
  requestedBy: string | null;
  stagedAt: string | null;
}

export interface StagedOutcome {
  applied: (RestoreResult & StagedRequest) | null;
  failed: (StagedRequest & { error: string; keptIn: string }) | null;
}

/**
 * Apply a staged restore; the caller holds server.lock. A staged archive that fails is moved aside (never
 * deleted) with the reason, and the server starts on the data it had: a bad archive must not keep it down.
 */
export async function applyStagedRestore(volume: DataVolume): Promise<StagedOutcome> {
  if (!hasStagedRestore(volume)) return { applied: null, failed: null };
  let request: StagedRequest = { source: "unknown", requestedBy: null, stagedAt: null };
  try {
    const stored = JSON.parse(fs.readFileSync(path.join(volume.restoreStaged, REQUEST), "utf8")) as Partial<StagedRequest>;
    request = { source: String(stored.source ?? "unknown"), requestedBy: stored.requestedBy ?? null, stagedAt: stored.stagedAt ?? null };
  } catch {
    // request.json is informative only
  }
  try {
    const result = await restore({
      dataDir: volume.root,
      archive: path.join(volume.restoreStaged, ARCHIVE),
      confirm: async () => true,
      underServerLock: true,
    });
    fs.rmSync(volume.restoreStaged, { recursive: true, force: true });
    return { applied: { ...result, ...request }, failed: null };
  } catch (err) {
    const keptIn = path.join(volume.root, `restore-staged-failed-${fileTimestamp()}`);
    fs.renameSync(volume.restoreStaged, keptIn);
    const error = describeFailure(err);
    writeFileAtomic(path.join(keptIn, "error.txt"), error + "\n");
    return { applied: null, failed: { ...request, error, keptIn } };
  }
}
