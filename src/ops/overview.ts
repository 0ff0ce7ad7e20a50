import fs from "node:fs";
import path from "node:path";
import type { Licence } from "../licence/licence.js";
import type { Store } from "../store/store.js";
import { APP_VERSION } from "../version.js";
import type { BackupStatus } from "./backup-runner.js";
import { action, setting } from "../hints.js";

/** What needs an operator's action, as the overview lists it; `hint` is neutral (the shell words it). */
export interface OverviewWarning {
  code: "backup_failing" | "no_backup_yet" | "licence_expiring" | "licence_expired" | "licence_invalid" | "disk_nearly_full" | "library_failing" | "connection_revoked" | string;
  message: string;
  hint: string;
}

export interface Overview {
  version: string;
  schemaVersion: number;
  licence: { state: Licence["state"]; licensee: string | null; expiresAt: string | null; daysLeft: number | null };
  volume: { path: string; bytes: number; backupsBytes: number; freeBytes: number; totalBytes: number };
  libraries: { total: number; byState: Record<string, number> };
  backup: { last: BackupStatus["lastResult"]; nextRun: string | null; running: boolean; newestArchive: NewestArchive | null };
  warnings: OverviewWarning[];
}

/** The newest archive at the configured destination (whoever wrote it: this server, or cron's lds backup). */
export interface NewestArchive {
  name: string;
  modifiedAt: string;
  location: string;
}

const DAY = 86_400_000;
/** A licence this close to its end is a warning: enough time to renew it before the public API closes. */
const LICENCE_WARNING_DAYS = 30;
/** Free space under either limit is a warning: a backup staged in the volume needs room. */
const DISK_WARNING_RATIO = 0.1;
const DISK_WARNING_BYTES = 1024 ** 3;

/** The dashboard's first page: the state of this server and what needs action, in one answer. */
export async function overview(input: { store: Store; dataDir: string; backupsDir: string; licence: Licence; backup: BackupStatus; newestArchive: NewestArchive | null; now?: Date }): Promise<Overview> {
  const { store, dataDir, backupsDir, licence, backup, newestArchive } = input;
  const now = input.now ?? new Date();
  const libraries = await store.libraries.list();
  const byState: Record<string, number> = {};
  for (const library of libraries) byState[library.state] = (byState[library.state] ?? 0) + 1;
  const backupsBytes = await treeSize(backupsDir);
  const bytes = (await treeSize(dataDir)) - (backupsDir.startsWith(dataDir + path.sep) ? backupsBytes : 0);
  const disk = await fs.promises.statfs(dataDir);
  const volume = { path: dataDir, bytes, backupsBytes, freeBytes: disk.bavail * disk.bsize, totalBytes: disk.blocks * disk.bsize };
  const daysLeft = licence.expiresAt ? Math.floor((Date.parse(licence.expiresAt) - now.getTime()) / DAY) : null;

  const warnings: OverviewWarning[] = [...backup.warnings];
  const last = backup.lastResult;
  if (last && !last.ok) {
    warnings.push({
      code: "backup_failing",
      message: `The last backup (${last.trigger}, ${last.startedAt}) failed: ${last.error?.message ?? "unknown error"}`,
      hint: last.error?.hint ?? `Fix the cause, then back up again: ${action("backup.status")}.`,
    });
  }
  // Backups made by cron's lds backup to the same destination count: only no archive at all is a warning.
  if (!last && !newestArchive && libraries.length > 0) {
    warnings.push({
      code: "no_backup_yet",
      message: "There is no backup of this data yet: no run by this server, and no archive at the configured destination.",
      hint: "Set a destination and a schedule on the Backups page, then back up now.",
    });
  }
  if (licence.state === "expired")
    warnings.push({
      code: "licence_expired",
      message: `The licence expired on ${licence.expiresAt}: the public API is closed.`,
      hint: `Install a renewed licence (license.json in the data directory, or ${setting("licence")}).`,
    });
  if (licence.state === "invalid")
    warnings.push({ code: "licence_invalid", message: `The licence cannot be read: ${licence.problem}.`, hint: `Install a valid licence (license.json in the data directory, or ${setting("licence")}).` });
  if (licence.state === "valid" && daysLeft !== null && daysLeft <= LICENCE_WARNING_DAYS) {
    warnings.push({
      code: "licence_expiring",
      message: `The licence expires in ${daysLeft} day${daysLeft === 1 ? "" : "s"} (${licence.expiresAt}).`,
      hint: "Renew it before then: an expired licence closes the public API.",
    });
  }
  if (volume.freeBytes < Math.max(DISK_WARNING_BYTES, volume.totalBytes * DISK_WARNING_RATIO)) {
    warnings.push({
      code: "disk_nearly_full",
      message: `Only ${Math.round(volume.freeBytes / 1024 ** 2)} MiB are free on the data volume's filesystem.`,
      hint: "Free space or move old archives elsewhere: backups and restores need room for a full copy.",
    });
  }
  const teams = new Map((await store.teams.list()).map((t) => [t.id, t.name]));
  for (const grant of (await store.oauth.list()).filter((g) => g.state === "revoked")) {
    warnings.push({
      code: "connection_revoked",
      message: `Team ${teams.get(grant.teamId) ?? grant.teamId}'s ${grant.provider} account ${grant.account} no longer works: ${grant.problem ?? "its authorisation was revoked or expired"}.`,
      hint: "Reconnect it in the dashboard's Connections page; libraries that use it fail until then.",
    });
  }
  for (const library of libraries.filter((l) => l.state === "failed")) {
    warnings.push({
      code: "library_failing",
      message: `${library.id} failed: ${library.stateReason ?? "no reason recorded"}`,
      hint: `Fix the cause, then refresh it: ${action("library.refresh", { libraryName: library.id })}.`,
    });
  }
  return {
    version: APP_VERSION,
    schemaVersion: await store.schemaVersion(),
    licence: { state: licence.state, licensee: licence.licensee, expiresAt: licence.expiresAt, daysLeft },
    volume,
    libraries: { total: libraries.length, byState },
    backup: { last, nextRun: backup.nextRun, running: backup.running, newestArchive },
    warnings,
  };
}

/** Bytes of the files under a directory (0 when it does not exist); symbolic links are not followed. */
async function treeSize(dir: string): Promise<number> {
  let total = 0;
  let entries: fs.Dirent[];
  try {
    entries = await fs.promises.readdir(dir, { withFileTypes: true });
  } catch {
    return 0;
  }
  for (const entry of entries) {
    const at = path.join(dir, entry.name);
    if (entry.isDirectory()) total += await treeSize(at);
    else if (entry.isFile()) total += (await fs.promises.stat(at).catch(() => ({ size: 0 }))).size;
  }
  return total;
}
