import fs from "node:fs";
import type { Readable } from "node:stream";
import { archiveDamaged } from "../archive/manifest.js";
import type { Destination } from "../destinations/destination.js";
import { LdsError, fromSystemError } from "../errors.js";

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
  // 256 KiB reads: as fast as 1 MiB ones here, and an encrypted archive's chunks in flight to the decryption
  // thread (three of them, each answered with its plaintext) cost 13 MiB less at the peak (measured, 0.7).
  return { stream: fs.createReadStream(file, { highWaterMark: 256 * 1024 }), size: stat.size };
}

/**
 * The archive as a stream: a local file, or an object at a destination. `headBytes` limits a remote read to the
 * start of the object (inspect needs only the manifest).
 */
export async function openSource(
  archive: string,
  remote?: { destination: Destination; name: string },
  headBytes?: number,
): Promise<{ stream: Readable; size: number }> {
  if (!remote) return openArchiveFile(archive);
  const { size } = await remote.destination.stat(remote.name);
  if (size === 0) throw emptyArchive(archive);
  const range: [number, number] | undefined = headBytes ? [0, Math.min(size, headBytes) - 1] : undefined;
  return { stream: await remote.destination.get(remote.name, { range }), size };
}

function emptyArchive(where: string): LdsError {
  return archiveDamaged(`${where} is empty (0 bytes)`, "The backup that wrote it probably failed; use another archive.");
}
