import type { Store } from "../store/store.js";
import type { StagedOutcome } from "./staged-restore.js";

/**
 * The outcome of the last staged restore, kept in the store once the server has opened the volume (applied: in
 * the restored database; failed: in the one kept), so that the dashboard can show it after the restart.
 */
export interface RestoreOutcome {
  result: "applied" | "failed";
  source: string;
  requestedBy: string | null;
  stagedAt: string | null;
  finishedAt: string;
  /** Applied: where the replaced data is, and what the archive held. */
  preRestoreDir?: string | null;
  archiveCreatedAt?: string;
  libraries?: number;
  requeued?: string[];
  /** Failed: why, and where the staged archive was kept. */
  error?: string;
  keptIn?: string;
}

const LAST_OUTCOME = "restore.last_outcome";

export function outcomeRecord(outcome: StagedOutcome, finishedAt = new Date()): RestoreOutcome | null {
  const at = finishedAt.toISOString();
  if (outcome.applied) {
    const { source, requestedBy, stagedAt, preRestoreDir, manifest, requeued } = outcome.applied;
    return { result: "applied", source, requestedBy, stagedAt, finishedAt: at, preRestoreDir, archiveCreatedAt: manifest.createdAt, libraries: manifest.libraries.length, requeued };
  }
  if (outcome.failed) return { result: "failed", ...outcome.failed, finishedAt: at };
  return null;
}

export async function recordRestoreOutcome(store: Store, record: RestoreOutcome): Promise<void> {
  await store.settings.set(LAST_OUTCOME, JSON.stringify(record));
}

export async function lastRestoreOutcome(store: Store): Promise<RestoreOutcome | null> {
  const stored = await store.settings.get(LAST_OUTCOME);
  return stored ? (JSON.parse(stored) as RestoreOutcome) : null;
}
