import { createHash, type Hash } from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import type { Readable } from "node:stream";
import { Parser, type ReadEntry } from "tar";
import { LdsError } from "../errors.js";
import { youngGarbageCollector } from "../util/young-garbage.js";
import { archiveDamaged, MANIFEST_MAX_BYTES, MANIFEST_PATH, parseManifest, type Manifest, type ManifestFile } from "./manifest.js";

export interface ReadArchiveOptions {
  /**
   * A new, empty directory to extract the files into (each written with O_EXCL, mode 0600). Without it the
   * reader stops once the manifest is read: that is all `inspect` needs.
   */
  extractTo?: string;
  /** Called as soon as the manifest is valid; throwing here stops the read (a too-new archive, say). */
  onManifest?: (manifest: Manifest) => void;
  /** Bytes of the (uncompressed) archive read so far. */
  onProgress?: (bytes: number) => void;
  /** Called once an extracted file is written and its checksum matched, while later files may still stream. */
  onFileVerified?: (file: ManifestFile, extractedTo: string) => void;
  signal?: AbortSignal;
}

/**
 * Read an archive as hostile input. The manifest must come first and be valid; after it only regular files the
 * manifest lists may follow, each once, with the listed size and SHA-256. Anything else (other paths, `..`,
 * absolute paths, links, devices, FIFOs, directories, duplicates, truncation, bad gzip) rejects the whole archive.
 * Nothing is ever written outside `extractTo`, and no owner, mode or time from the archive is applied.
 */
export async function readArchive(input: Readable, options: ReadArchiveOptions = {}): Promise<Manifest> {
  let onAbort: (() => void) | undefined;
  try {
    return await readWith(input, options, (listener) => (onAbort = listener));
  } finally {
    if (onAbort) options.signal?.removeEventListener("abort", onAbort);
  }
}

function readWith(input: Readable, options: ReadArchiveOptions, setAbort: (listener: () => void) => void): Promise<Manifest> {
  return new Promise<Manifest>((resolve, reject) => {
    let manifest: Manifest | undefined;
    let settled = false;
    let bytes = 0;
    const seen = new Set<string>();
    const pendingWrites: Array<Promise<void>> = [];
    const parser = new Parser({ strict: true, maxMetaEntrySize: 64 * 1024, maxDecompressionRatio: 10_000 });

    let gzipped = false;
    const fail = (err: unknown) => {
      if (settled) return;
      settled = true;
      input.destroy();
      parser.removeAllListeners("entry");
      parser.on("error", () => {});
      reject(toArchiveError(err, gzipped));
    };
    const finish = () => {
      if (settled) return;
      if (!manifest) return fail(corrupt("it holds no manifest.json (empty, or not an LDS archive)"));
      const missing = manifest.files.filter((f) => !seen.has(f.path));
      if (options.extractTo && missing.length > 0) {
        return fail(corrupt(`${missing.map((f) => f.path).join(", ")} missing (the archive is truncated)`));
      }
      // Inspecting reads no further than the manifest: stop the input instead of reading the rest.
      if (!options.extractTo) input.destroy();
      Promise.all(pendingWrites).then(() => {
        if (settled) return;
        settled = true;
        resolve(manifest!);
      }, fail);
    };

    const onAbort = () => fail(new LdsError("interrupted", "Reading the archive was interrupted."));
    if (options.signal?.aborted) return onAbort();
    options.signal?.addEventListener("abort", onAbort, { once: true });
    setAbort(onAbort);

    parser.on("entry", (entry: ReadEntry) => {
      if (settled) return entry.resume();
      try {
        if (!manifest) return readManifestEntry(entry);
        const listed = admit(entry, manifest, seen);
        if (!options.extractTo) return entry.resume();
        const written = extractEntry(entry, listed, options.extractTo, (n) => options.onProgress?.((bytes += n)));
        pendingWrites.push(written.then((target) => (settled ? undefined : options.onFileVerified?.(listed, target))));
        pendingWrites.at(-1)!.catch(fail);
      } catch (err) {
        entry.resume();
        fail(err);
      }
    });

    function readManifestEntry(entry: ReadEntry): void {
      if (entry.path !== MANIFEST_PATH || entry.type !== "File") {
        throw unsafe(`its first entry is "${printable(entry.path)}", not manifest.json`);
      }
      if (entry.size > MANIFEST_MAX_BYTES) throw unsafe(`manifest.json is ${entry.size} bytes, over the ${MANIFEST_MAX_BYTES}-byte limit`);
      const chunks: Buffer[] = [];
      entry.on("data", (chunk: Buffer) => chunks.push(chunk));
      entry.on("end", () => {
        try {
          manifest = parseManifest(Buffer.concat(chunks));
          options.onManifest?.(manifest);
          if (options.extractTo) checkFreeSpace(options.extractTo, manifest);
          else finish();
        } catch (err) {
          fail(err);
        }
      });
    }

    parser.on("error", fail);
    parser.on("end", finish);
    input.on("error", fail);
    input.once("data", (chunk: Buffer) => (gzipped = chunk[0] === 0x1f && chunk[1] === 0x8b));
    input.pipe(parser as unknown as NodeJS.WritableStream);
  });
}

/** Decide whether an entry after the manifest is acceptable, and return the manifest's record of it. */
function admit(entry: ReadEntry, manifest: Manifest, seen: Set<string>): ManifestFile {
  const name = printable(entry.path);
  if (path.isAbsolute(entry.path) || entry.path.split(/[\\/]/).includes("..")) throw unsafe(`entry "${name}" has an unsafe path`);
  if (entry.type !== "File") throw unsafe(`entry "${name}" is a ${entry.type}, and only regular files are allowed`);
  const listed = manifest.files.find((f) => f.path === entry.path);
  if (!listed) throw unsafe(`entry "${name}" is not listed in the manifest`);
  if (seen.has(entry.path)) throw unsafe(`entry "${name}" appears twice`);
  seen.add(entry.path);
  if (entry.size !== listed.size) throw corrupt(`${name} is ${entry.size} bytes, the manifest says ${listed.size}`);
  return listed;
}

/** Write one entry under `root` while hashing it; resolves with its path once the file is flushed and its hash matches. */
function extractEntry(entry: ReadEntry, listed: ManifestFile, root: string, progress: (n: number) => void): Promise<string> {
  const target = path.join(root, listed.path);
  fs.mkdirSync(path.dirname(target), { recursive: true, mode: 0o700 });
  const out = fs.createWriteStream(target, { flags: "wx", mode: 0o600 });
  const hash: Hash = createHash("sha256");
  const collectGarbage = youngGarbageCollector();
  return new Promise<string>((resolve, reject) => {
    entry.on("data", (chunk: Buffer) => {
      hash.update(chunk);
      collectGarbage(chunk.length);
      progress(chunk.length);
      if (!out.write(chunk)) {
        entry.pause();
        out.once("drain", () => entry.resume());
      }
    });
    entry.on("end", () => out.end());
    out.on("error", reject);
    out.on("finish", () => {
      const digest = hash.digest("hex");
      if (digest !== listed.sha256) reject(corrupt(`${listed.path} fails its checksum (the file is damaged)`));
      else resolve(target);
    });
  });
}

const SQLITE_HEADROOM = 8 * 1024 * 1024;

/** Refuse before writing when the files cannot fit: a hostile manifest must not fill the data volume. */
function checkFreeSpace(dir: string, manifest: Manifest): void {
  // Room for SQLite too: a restore switches the restored databases to WAL and re-queues jobs before the swap.
  const files = manifest.files.reduce((sum, f) => sum + f.size, 0);
  const needed = files + Math.ceil(files * 0.05) + SQLITE_HEADROOM;
  const stats = fs.statfsSync(dir);
  const free = stats.bavail * stats.bsize;
  if (needed > free) {
    throw new LdsError("disk_full", `Restoring the archive needs ${formatBytes(needed)} (its files and room for the databases' journals), but the data volume has ${formatBytes(free)} free.`, {
      hint: "Free space on that filesystem, then run this again.",
    });
  }
}

export function formatBytes(n: number): string {
  const units = ["B", "KiB", "MiB", "GiB", "TiB"];
  let i = 0;
  while (n >= 1024 && i < units.length - 1) {
    n /= 1024;
    i++;
  }
  return `${n.toFixed(i === 0 ? 0 : 1)} ${units[i]}`;
}

function toArchiveError(err: unknown, gzipped: boolean): LdsError {
  if (err instanceof LdsError) return err;
  const e = err as NodeJS.ErrnoException & { tarCode?: string };
  if (e?.code === "ENOSPC" || e?.code === "EACCES" || e?.code === "EPERM") {
    return new LdsError(e.code === "ENOSPC" ? "disk_full" : "permission_denied", `Could not write the extracted archive: ${e.message}`, {
      hint: "Free space on, or fix the permissions of, the data volume, then run this again.",
    });
  }
  if (e?.code === "Z_DATA_ERROR" || e?.code === "Z_BUF_ERROR" || /zlib|gzip|incorrect header|unexpected end/i.test(e?.message ?? "")) {
    return corrupt(`its gzip compression is damaged (${e.message})`);
  }
  if (e?.tarCode || e?.code?.startsWith?.("TAR_")) {
    return corrupt(`${gzipped ? "its gzip-compressed content" : "it"} is not a valid tar file (${e.message})`);
  }
  return corrupt(e?.message ?? String(err));
}

const corrupt = (what: string) => archiveDamaged(what);

function unsafe(what: string): LdsError {
  return new LdsError("archive_unsafe", `The archive was refused: ${what}.`, {
    hint: "Nothing was changed. Only archives written by an LDS backup can be restored; check where this one came from.",
  });
}

/** Names from an archive go into messages: strip control characters and cap the length. */
function printable(name: string): string {
  // eslint-disable-next-line no-control-regex -- control characters in an archive's names are exactly what this replaces
  return name.replace(/[\u0000-\u001f\u007f]/g, "?").slice(0, 200);
}
