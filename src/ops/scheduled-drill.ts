import type { Logger } from "pino";
import type { Destination } from "../destinations/destination.js";
import { describeFailure, isLdsError } from "../errors.js";
import type { Store } from "../store/store.js";
import type { ArchiveWarning } from "../archive/archive-warnings.js";
import { DRILL_PREFIX, restoreDrill } from "./restore-drill.js";
import { removeLeftovers } from "../util/files.js";

/** The last restore drill the server ran, as the status endpoint shows it. */
export interface DrillRecord {
  at: string;
  archive: string;
  ok: boolean;
  /** Not run, and why (an encrypted archive: the server holds no identity). */
  skipped?: string;
  durationMs?: number;
  checks?: Array<{ part: string; detail: string }>;
  error?: { code: string; message: string };
}

export const LAST_DRILL = "backup.last_drill";

/** A failed drill is a warning that needs action, wherever the backup status is shown. */
export function drillWarnings(record: DrillRecord | null): ArchiveWarning[] {
  if (!record || record.ok) return [];
  return [
    {
      code: "restore_drill_failed",
      message: `The restore drill of ${record.archive} on ${record.at} failed: ${record.error?.message ?? "unknown error"}`,
      hint: "Do not count on that archive: make a new backup now, drill it, and keep the failed one for investigation.",
    },
  ];
}

/**
 * Run a restore drill on one archive of the configured destination and record the outcome. The temporary volume
 * lives on the data volume's filesystem (the restore checks its free space first) and is removed afterwards.
 * Encrypted archives are skipped: the server holds no identity (drill them with `lds verify --restore-test`).
 */
export async function drillArchive(store: Store, logger: Logger, dataDir: string, destination: Destination, name: string): Promise<DrillRecord> {
  const at = new Date().toISOString();
  let record: DrillRecord;
  if (name.endsWith(".age")) {
    record = { at, archive: name, ok: true, skipped: "the archive is encrypted and the server holds no identity: drill it where the identity is kept" };
  } else {
    try {
      // Temporary volumes of drills a crash interrupted: only the server makes them here.
      removeLeftovers(dataDir, DRILL_PREFIX);
      const local = destination.kind === "local";
      const archive = local ? (await destination.stat(name)).location : `${destination.description}/${name}`;
      const result = await restoreDrill(archive, { remote: local ? undefined : { destination, name }, tempDir: dataDir });
      record = { at, archive: name, ok: true, durationMs: result.durationMs, checks: result.checks.map(({ part, detail }) => ({ part, detail })) };
      logger.info({ archive: name, durationMs: result.durationMs }, "restore drill passed");
    } catch (err) {
      record = { at, archive: name, ok: false, error: isLdsError(err) ? { code: err.code, message: err.message } : { code: "internal_error", message: describeFailure(err) } };
      logger.error({ archive: name, error: record.error }, "restore drill failed");
    }
  }
  await store.settings.set(LAST_DRILL, JSON.stringify(record)).catch((err: unknown) => logger.error({ err: String(err) }, "could not record the restore drill"));
  return record;
}
