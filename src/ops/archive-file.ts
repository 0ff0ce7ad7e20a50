import fs from "node:fs";
import type { Readable } from "node:stream";
import { archiveDamaged } from "../archive/manifest.js";
import type { Destination } from "../destinations/destination.js";
import { LdsError, fromSystemError } from "../errors.js";
import { startsAsAge } from "../archive/age.js";

/** Open an archive file for streaming, with clear errors for a missing path or a directory. */
export function openArchiveFile(file: string): { stream: Readable; size: number } {
  let stat: fs.Stats;
  try {
    stat = fs.statSync(file);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "ENOENT") {
      throw new LdsError("archive_not_found", `No archive at ${file}.`, {
        hint: "Check the path; archives are named lds-backup-<UTC time>.tar (or .tar.gz).",
      });
    }
    throw fromSystemError(err, file);
  }
  if (!stat.isFile()) {
    throw new LdsError("validation_error", `${file} is not a file.`, { hint: "Name an archive file, not a directory." });
  }
  if (stat.size === 0) {
    throw emptyArchive(file);
  }
  let fd: number;
  try {
    fd = fs.openSync(file, "r");
  } catch (err) {
    throw fromSystemError(err, file);
  }
  // One open: the stream reads from the descriptor whose first bytes chose its read size.
  return { stream: fs.createReadStream(file, { fd, start: 0, highWaterMark: readSizeFor(fd, file) }), size: stat.size };
}

/**
 * 1 MiB reads for a plain archive: lds.db is extracted and its checksum matched in 0.51-0.53 s instead of 0.67-1.69
 * (1 GiB volume), and its full-text check, the longest, starts that much earlier (docs/benchmarks.md, 0.7.10).
 * 256 KiB for an encrypted one: its chunks in flight to the decryption thread (three, each answered with its
 * plaintext) then cost 13 MiB less at the peak, at the same speed (measured, 0.7).
 */
function readSizeFor(fd: number, file: string): number {
  const head = Buffer.alloc(64);
  try {
    const read = fs.readSync(fd, head, 0, head.length, 0);
    return startsAsAge(head.subarray(0, read)) ? 256 * 1024 : 1024 * 1024;
  } catch (err) {
    fs.closeSync(fd);
    throw fromSystemError(err, file);
  }
}

/**
 * The archive as a stream: a local file, or an object at a destination. `headBytes` limits a remote read to the
 * start of the object (inspect needs only the manifest).
 */
export async function openSource(archive: string, remote?: { destination: Destination; name: string }, headBytes?: number): Promise<{ stream: Readable; size: number }> {
  if (!remote) return openArchiveFile(archive);
  const { size } = await remote.destination.stat(remote.name);
  if (size === 0) throw emptyArchive(archive);
  const range: [number, number] | undefined = headBytes ? [0, Math.min(size, headBytes) - 1] : undefined;
  return { stream: await remote.destination.get(remote.name, { range }), size };
}

function emptyArchive(where: string): LdsError {
  return archiveDamaged(`${where} is empty (0 bytes)`, "The backup that wrote it probably failed; use another archive.");
}
