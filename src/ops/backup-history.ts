import type { Store } from "../store/store.js";
import type { LastResult } from "./backup-runner.js";

/** The dashboard's run history: the outcomes of the server's last 50 backups, newest first. */
const RUNS = "backup.runs";
const HISTORY_LENGTH = 50;

export async function backupRuns(store: Store): Promise<LastResult[]> {
  const stored = await store.settings.get(RUNS);
  return stored ? (JSON.parse(stored) as LastResult[]) : [];
}

/** Only the backup runner writes it, one run at a time, so read-modify-write needs no lock of its own. */
export async function recordBackupRun(store: Store, run: LastResult): Promise<void> {
  const runs = [run, ...(await backupRuns(store))].slice(0, HISTORY_LENGTH);
  await store.settings.set(RUNS, JSON.stringify(runs));
}
