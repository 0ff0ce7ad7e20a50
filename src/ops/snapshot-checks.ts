import type { Readable } from "node:stream";
import { archiveEngine, type CheckResult } from "../archive/check-snapshot.js";
import { compatibility } from "../archive/compatibility.js";
import { LdsError } from "../errors.js";
import { ARCHIVE_FILES, type Manifest, type ManifestFile } from "../archive/manifest.js";
import { readArchive, type ReadArchiveOptions } from "../archive/read-archive.js";
import { heavyWorkYieldsToRequests, runHeavy } from "./heavy-work.js";

/** readArchive into `options.extractTo`, then every check of what it extracted (overlapped as SnapshotChecks says). */
export async function extractAndCheck(input: Readable, options: ReadArchiveOptions & { extractTo: string }): Promise<{ manifest: Manifest; checks: CheckResult[] }> {
  const snapshotChecks = new SnapshotChecks(options.extractTo);
  try {
    const manifest = await readArchive(input, { ...options, onFileVerified: snapshotChecks.fileVerified });
    return { manifest, checks: await snapshotChecks.results(manifest) };
  } finally {
    snapshotChecks.dispose();
  }
}

/**
 * A restore's extraction: the archive's copies extracted into `work` and every check of them run, an archive of a
 * newer schema refused as soon as its manifest is read, and progress reported against the manifest's total size.
 */
export async function extractAndCheckForRestore(input: Readable, work: string, options: { signal?: AbortSignal; onProgress?: (bytes: number, totalBytes: number) => void }): Promise<Manifest> {
  let total = 0;
  const { manifest } = await extractAndCheck(input, {
    extractTo: work,
    signal: options.signal,
    onManifest: (m) => {
      refuseIfNewer(m);
      total = m.files.reduce((sum, f) => sum + f.size, 0);
    },
    onProgress: (bytes) => options.onProgress?.(bytes, total),
  });
  return manifest;
}

function refuseIfNewer(manifest: Manifest): void {
  const verdict = compatibility(manifest);
  if (!verdict.restorable) {
    throw new LdsError("archive_too_new", `This archive cannot be restored here: ${verdict.reason}.`, {
      hint: "Install the same or a newer LDS release, then restore again. Nothing was changed.",
    });
  }
}

/**
 * The checks of an archive that verify and restore extract, overlapped with the extraction: lds.db's full-text
 * index check (about 80% of the checking time) starts on a thread of its own as soon as lds.db is extracted and
 * its checksum matched, while vectors.db still streams; everything else runs once every file is there. Every byte
 * is checked exactly as before; only the order changes. dispose() stops a check still running.
 */
class SnapshotChecks {
  private readonly stopper = new AbortController();
  private virtualTables: Promise<void> | undefined;

  constructor(private readonly dir: string) {}

  /** For readArchive's onFileVerified. */
  readonly fileVerified = (file: ManifestFile, extractedTo: string): void => {
    if (file.path !== ARCHIVE_FILES.db) return;
    this.virtualTables = archiveEngine().checkSearchIndexCopy({ file: extractedTo, name: file.path }, { yieldToRequests: heavyWorkYieldsToRequests(), signal: this.stopper.signal });
    // Awaited in results(); a failure before then must not count as unhandled.
    this.virtualTables.catch(() => {});
  };

  /** Every check's result, once readArchive has extracted every file. Throws the first damage found. */
  async results(manifest: Manifest): Promise<CheckResult[]> {
    if (!this.virtualTables) return runHeavy("checkExtractedSnapshot", this.dir, manifest);
    const [results] = await Promise.all([runHeavy("checkExtractedSnapshot", this.dir, manifest, { virtualTablesCheckedElsewhere: true }), this.virtualTables]);
    return results;
  }

  /** Stop a check still running: the read failed, or a check did. */
  dispose(): void {
    this.stopper.abort();
  }
}
