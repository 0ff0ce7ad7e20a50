import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import type { CheckResult } from "../archive/check-snapshot.js";
import { compatibility, type Compatibility } from "../archive/compatibility.js";
import type { Manifest } from "../archive/manifest.js";
import type { Destination } from "../destinations/destination.js";
import { openSource } from "./archive-file.js";
import { extractAndCheck } from "./snapshot-checks.js";
import { NO_KEYS, openArchive, type AgeHeader, type ArchiveKeys } from "../archive/age.js";
import { keyInClearWarning, type ArchiveWarning } from "../archive/archive-warnings.js";

export interface VerifyOptions {
  /** Read the archive from a destination (streamed, no local copy) instead of the file `archive`. */
  remote?: { destination: Destination; name: string };
  /** Where the snapshots are unpacked for SQLite's checks, then removed. @default os.tmpdir() */
  tempDir?: string;
  signal?: AbortSignal;
  onProgress?: (bytes: number, totalBytes: number) => void;
  /** Identities and passphrases for an age-encrypted archive. */
  keys?: ArchiveKeys;
}

export interface VerifyResult {
  /** The age header's stanza types, or null for an unencrypted archive. */
  encryption: AgeHeader | null;
  warnings: ArchiveWarning[];
  archive: string;
  size: number;
  manifest: Manifest;
  compatibility: Compatibility;
  checks: CheckResult[];
  durationMs: number;
}

/**
 * Check an archive completely: tar structure, manifest, every checksum, SQLite integrity of both snapshots and
 * the key's length. Throws an LdsError naming the damaged part; anyone can run it, no data volume needed.
 */
export async function verify(archive: string, options: VerifyOptions = {}): Promise<VerifyResult> {
  const started = Date.now();
  const source = await openSource(archive, options.remote);
  const { size } = source;
  const { stream, encryption } = await openArchive(source.stream, options.keys ?? NO_KEYS);
  const work = fs.mkdtempSync(path.join(options.tempDir ?? os.tmpdir(), "lds-verify-"));
  try {
    let total = 0;
    const { manifest, checks: snapshotChecks } = await extractAndCheck(stream, {
      extractTo: work,
      signal: options.signal,
      onManifest: (m) => (total = m.files.reduce((sum, f) => sum + f.size, 0)),
      onProgress: (bytes) => options.onProgress?.(bytes, total),
    });
    const checks = [
      { part: "tar structure and manifest", ok: true as const, detail: `${manifest.files.length} files, all listed` },
      ...manifest.files.map((f) => ({ part: f.path, ok: true as const, detail: `sha256 ok (${f.size} bytes)` })),
      ...snapshotChecks,
    ];
    return { archive, size, encryption, warnings: keyInClearWarning(encryption), manifest, compatibility: compatibility(manifest), checks, durationMs: Date.now() - started };
  } finally {
    fs.rmSync(work, { recursive: true, force: true });
  }
}
