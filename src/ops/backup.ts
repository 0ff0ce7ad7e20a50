import fs from "node:fs";
import path from "node:path";
import { Transform } from "node:stream";
import { setTimeout as sleep } from "node:timers/promises";
import { dataVolume, type DataVolume } from "../config/data-volume.js";
import type { DatabaseSettings } from "../config/database-settings.js";
import { LdsError } from "../errors.js";
import { setting } from "../hints.js";
import { archiveName, type Destination } from "../destinations/destination.js";
import { writeManifest } from "../archive/write-archive.js";
import { archiveBytes, type ArchiveBytes, type ArchiveBytesOptions } from "../archive/archive-bytes.js";
import { archiveBytesInThread } from "../archive/archive-bytes-thread.js";
import { hashFilesInThread } from "../archive/hash-files-thread.js";
import { ARCHIVE_FILES, type Manifest } from "../archive/manifest.js";
import type { ArchiveEncryption } from "../archive/age.js";
import { keyInClearWarning, type ArchiveWarning } from "../archive/archive-warnings.js";
import { heavyWorkYieldsToRequests, runHeavy } from "./heavy-work.js";
import { layOutSnapshot } from "../snapshot/snapshot-volume.js";
import { chooseEngine } from "../engine/choose-engine.js";
import type { HeldLock } from "../locks/lock-file.js";
import { assertKeep, prune } from "./retention.js";
import { enterVolume, type VolumeEntry } from "./enter-volume.js";
import { removeLeftovers } from "../util/files.js";

export interface BackupOptions {
  dataDir: string;
  /** The engine and database the volume's records are in (config/database-settings.ts). @default SQLite in dataDir */
  database?: DatabaseSettings;
  destination: Destination;
  /** Compress with gzip level 1. @default false (vectors barely compress; see docs/benchmarks.md) */
  gzip?: boolean;
  /** After a successful backup, keep only the newest N archives at the destination. @default undefined (keep all) */
  keep?: number;
  signal?: AbortSignal;
  /** backup.lock already taken by the caller (the server checks it before answering 202); released at the end. */
  lock?: HeldLock;
  onProgress?: (progress: { phase: "snapshot" | "write"; bytes: number; totalBytes: number }) => void;
  /** Encrypt the archive with age, to recipients (recommended: no secret needed to back up) or a passphrase. */
  encryption?: ArchiveEncryption;
}

export interface BackupResult {
  name: string;
  location: string;
  size: number;
  sha256: string;
  /** How the archive is encrypted: "age (2 recipients)", "age (passphrase)"; null when it is not. */
  encryption: string | null;
  /** Things the operator should act on although the backup succeeded (an archive with the key in clear). */
  warnings: ArchiveWarning[];
  createdAt: string;
  schemaVersion: number;
  libraries: number;
  partial: string[];
  durationMs: number;
  /** Time spent snapshotting and hashing, then streaming to the destination: where a slow backup loses time. */
  phases: { snapshotMs: number; writeMs: number };
  /** Archives removed by retention. */
  pruned: string[];
  /** Leftovers of killed backups removed at the destination first (incomplete uploads, temporary files). */
  incompleteRemoved: string[];
  /** Looking for such leftovers failed (e.g. the credentials may not list uploads): reported, not fatal. */
  incompleteError: string | null;
  /** Retention failed after the archive was safely written: reported, not fatal. */
  pruneError: string | null;
}

const STAGING_PREFIX = "backup-staging-";

/**
 * Back up the data volume into one archive at `destination`, online: the server may keep serving and writing.
 * Holds backup.lock for its whole run. On failure or abort, the staging folder is removed and the destination
 * is left without any partial archive (the destination's `put` is atomic).
 */
export async function backup(options: BackupOptions): Promise<BackupResult> {
  const started = Date.now();
  const volume = dataVolume(options.dataDir, options.database);
  const engine = chooseEngine(volume);
  let entry: VolumeEntry;
  // The age library only when this backup encrypts: loading it costs every other backup 50-90 ms.
  let seal: typeof import("../archive/age-seal.js") | undefined;
  try {
    if (options.keep !== undefined) assertKeep(options.keep);
    if (options.encryption) {
      seal = await import("../archive/age-seal.js");
      if ("recipients" in options.encryption) seal.checkRecipients(options.encryption.recipients);
    }
    if (!fs.existsSync(volume.root)) throw noDatabase(volume);
    // Registered as a user of the volume: a restore cannot swap files under the snapshot (issue 11, item 6).
    entry = enterVolume(volume.root, "backup");
  } catch (err) {
    await options.lock?.release();
    throw err;
  }
  let lock: HeldLock;
  try {
    await checkWhole(volume);
    lock = options.lock ?? (await engine.lockBackups(volume, "backup"));
  } catch (err) {
    entry.leave();
    throw err;
  }
  let staging: string | undefined;
  let archive: ArchiveBytes | undefined;
  try {
    // Staging folders of backups killed before they could clean up. Safe: we hold backup.lock.
    removeLeftovers(volume.root, STAGING_PREFIX);
    const encrypted = options.encryption !== undefined;
    const createdAt = await freeNameTime(options.destination, options.gzip ?? false, encrypted);
    // What a backup killed mid-upload left at the destination (an S3 multipart upload stays billed for ever).
    // Not fatal: a policy may allow writing archives but not listing uploads; the bucket lifecycle rule then cleans.
    const incomplete = await options.destination.removeIncomplete().then(
      (removed) => ({ removed, error: null }),
      (err: Error) => ({ removed: [] as string[], error: err.message }),
    );
    const name = archiveName(createdAt, options.gzip ?? false, encrypted);
    staging = fs.mkdtempSync(path.join(volume.root, STAGING_PREFIX));
    options.onProgress?.({ phase: "snapshot", bytes: 0, totalBytes: 0 });
    const manifest = await snapshotAndDescribe(volume, staging, createdAt, options.signal);

    const snapshotDone = Date.now();
    const totalBytes = manifest.files.reduce((sum, f) => sum + f.size, 0);
    const meter = archiveMeter((bytes) => options.onProgress?.({ phase: "write", bytes, totalBytes }));
    const sealing = options.encryption ? await seal!.ageSealing(options.encryption) : undefined;
    archive = writeArchiveBytes({ stagingDir: staging, gzip: options.gzip ?? false, sealing }, options.destination);
    archive.stream.on("error", (err) => meter.destroy(err));
    // The size lets an S3 upload pick a part size that stays under the 10,000-part limit (tar and age add little).
    const sizeHint = Math.ceil(totalBytes * 1.01) + 1024 * 1024;
    const info = await options.destination.put(name, archive.stream.pipe(meter), { signal: options.signal, size: sizeHint });
    await archive.removed();
    const writeDone = Date.now();
    const retention = await applyRetention(options.destination, options.keep);
    return {
      name: info.name,
      location: info.location,
      size: info.size,
      sha256: archive.sha256(),
      encryption: describeEncryption(options.encryption),
      warnings: keyInClearWarning(options.encryption),
      createdAt: manifest.createdAt,
      schemaVersion: manifest.schemaVersion,
      libraries: manifest.libraries.length,
      partial: manifest.partial,
      durationMs: Date.now() - started,
      phases: { snapshotMs: snapshotDone - started, writeMs: writeDone - snapshotDone },
      incompleteRemoved: incomplete.removed,
      incompleteError: incomplete.error,
      ...retention,
    };
  } catch (err) {
    if ((err as Error).name === "AbortError" || options.signal?.aborted) {
      throw new LdsError("interrupted", "The backup was interrupted; no archive was written.", {
        hint: "Run the backup again when ready.",
      });
    }
    throw err;
  } finally {
    // A failed destination leaves the archive's stream unread: stop its thread before the staged files go.
    archive?.stream.destroy();
    if (staging) fs.rmSync(staging, { recursive: true, force: true });
    // Awaited: a lock held on a database connection is let go in a round trip, and the next backup may follow at once.
    await lock.release();
    entry.leave();
  }
}

/**
 * Copy the volume into `staging` and write its manifest. vectors.db is copied, then hashed, on a thread of its own
 * while lds.db is copied where runHeavy puts it (a worker thread in the server: synchronous SQLite work); lds.db's
 * copy starts only once vectors.db's state is fixed, so that it is the later of the two (snapshot-volume.ts says
 * why). lds.db is hashed on another thread while its libraries and canaries are read: neither copy nor hash waits
 * for the other file's.
 */
async function snapshotAndDescribe(volume: DataVolume, staging: string, createdAt: Date, signal?: AbortSignal): Promise<Manifest> {
  const yieldToRequests = heavyWorkYieldsToRequests();
  const hash = (...rels: string[]) =>
    hashFilesInThread(
      rels.map((rel) => path.join(staging, rel)),
      { yieldToRequests, signal },
    );
  await layOutSnapshot(volume, staging);
  let pinned!: (state?: string) => void;
  const vectorsPinned = new Promise<string | undefined>((resolve) => (pinned = resolve));
  // Told once the records' copy has taken the pinned state (or failed): an engine holding that state lets it go then.
  let recordsTaken!: () => void;
  const recordsTook = new Promise<void>((resolve) => (recordsTaken = resolve));
  // Not stopped by the signal: terminating a thread inside SQLite's copy aborts the whole process (better-sqlite3
  // throws into a dying isolate: "FATAL ERROR: v8::ToLocalChecked"). A failed or interrupted backup waits for it.
  const vectorsCopied = chooseEngine(volume).snapshotVectors(volume, path.join(staging, ARCHIVE_FILES.vectors), {
    yieldToRequests,
    onPinned: pinned,
    recordsTaken: recordsTook,
  });
  try {
    vectorsCopied.catch(() => {}); // awaited below; a step that fails first must not leave it unhandled
    const state = await Promise.race([vectorsPinned, vectorsCopied.then(() => undefined)]);
    try {
      await runHeavy("copyRecordsAndKey", volume, staging, state);
    } finally {
      recordsTaken();
    }
    throwIfAborted(signal);
    const restHashed = hash(ARCHIVE_FILES.db, ARCHIVE_FILES.key);
    restHashed.catch(() => {});
    const description = await runHeavy("describeSnapshot", volume, staging);
    const hashed = [await vectorsCopied, ...(await restHashed)];
    throwIfAborted(signal);
    // In archive order, as the manifest lists them.
    const files = Object.values(ARCHIVE_FILES).map((rel) => {
      const { sha256, size } = hashed.find((h) => h.file === path.join(staging, rel))!;
      return { path: rel, sha256, size };
    });
    return await writeManifest({ dir: staging, ...description }, createdAt, files);
  } catch (err) {
    recordsTaken();
    await vectorsCopied.catch(() => {});
    throw err;
  }
}

/**
 * The engine's check that the volume is whole (data_dir_invalid when not), with the message operators know for a
 * directory that holds no database at all.
 */
async function checkWhole(volume: DataVolume): Promise<void> {
  const engine = chooseEngine(volume);
  if (!engine.sharedByReplicas && !fs.existsSync(engine.files(volume).records)) throw noDatabase(volume);
  await engine.checkWhole(volume);
}

async function applyRetention(destination: Destination, keep?: number): Promise<{ pruned: string[]; pruneError: string | null }> {
  if (keep === undefined) return { pruned: [], pruneError: null };
  try {
    return { pruned: await prune(destination, keep), pruneError: null };
  } catch (err) {
    return { pruned: [], pruneError: (err as Error).message };
  }
}

/**
 * The archive's bytes (archive-bytes.ts): on a thread of their own in the server, where this thread serves requests,
 * and for an archive encrypted to a local file, whose cipher would otherwise add its time to the hashing here. Not
 * for S3 in a command: there the thread's memory came on top of the upload's part buffers (179-183 MiB against
 * 156-160 inline, docs/benchmarks.md), and the sealed stream keeps its garbage small instead; nor for a plain
 * archive in a command, where its copies only cost time.
 */
function writeArchiveBytes(options: ArchiveBytesOptions, destination: Destination): ArchiveBytes {
  const server = heavyWorkYieldsToRequests();
  if (server || (options.sealing && destination.kind === "local")) return archiveBytesInThread({ ...options, lowerPriority: server });
  return archiveBytes({ ...options, smallGarbage: options.sealing !== undefined });
}

/** Counts the archive's bytes on their way to the destination, for progress. */
function archiveMeter(onBytes: (bytes: number) => void): Transform {
  let bytes = 0;
  return new Transform({
    transform(chunk: Buffer, _encoding, callback) {
      bytes += chunk.length;
      onBytes(bytes);
      callback(null, chunk);
    },
  });
}

function describeEncryption(encryption: ArchiveEncryption | undefined): string | null {
  if (!encryption) return null;
  if ("passphrase" in encryption) return "age (passphrase)";
  return `age (${encryption.recipients.length} recipient${encryption.recipients.length === 1 ? "" : "s"})`;
}

/** Names have one-second resolution: wait for the next second rather than collide with an existing archive. */
async function freeNameTime(destination: Destination, gzip: boolean, encrypted: boolean): Promise<Date> {
  for (;;) {
    const now = new Date();
    try {
      await destination.stat(archiveName(now, gzip, encrypted));
    } catch (err) {
      if (err instanceof LdsError && err.code === "archive_not_found") return now;
      throw err;
    }
    await sleep(1000 - now.getMilliseconds());
  }
}

function throwIfAborted(signal?: AbortSignal): void {
  if (signal?.aborted) throw Object.assign(new Error("aborted"), { name: "AbortError" });
}

function noDatabase(volume: DataVolume): LdsError {
  const engine = chooseEngine(volume);
  if (engine.sharedByReplicas) {
    return new LdsError("data_dir_invalid", `The data directory ${volume.root} does not exist: a backup of the ${engine.title} database stages its copies there.`, {
      hint: `Point ${setting("dataDir")} at this replica's data directory.`,
    });
  }
  return new LdsError("data_dir_invalid", `${volume.root} holds no LDS database (${engine.fileNames.records}).`, {
    hint: `Point ${setting("dataDir")} at the server's data volume.`,
  });
}
