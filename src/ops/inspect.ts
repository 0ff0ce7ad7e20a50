import { compatibility, type Compatibility } from "../archive/compatibility.js";
import { MANIFEST_MAX_BYTES, type Manifest } from "../archive/manifest.js";
import { readArchive } from "../archive/read-archive.js";
import type { Destination } from "../destinations/destination.js";
import { openSource } from "./archive-file.js";
import { NO_KEYS, openArchive, type AgeHeader, type ArchiveKeys } from "../archive/age.js";
import { keyInClearWarning, type ArchiveWarning } from "../archive/archive-warnings.js";

export interface InspectResult {
  archive: string;
  size: number;
  encryption: AgeHeader | null;
  warnings: ArchiveWarning[];
  manifest: Manifest;
  compatibility: Compatibility;
}

/** What an archive holds, from its manifest alone: reads only the first entry, however large the archive. */
export async function inspect(archive: string, remote?: { destination: Destination; name: string }, keys: ArchiveKeys = NO_KEYS): Promise<InspectResult> {
  // An encrypted archive's header and first chunks fit in the same head read: the manifest is its first entry.
  const source = await openSource(archive, remote, MANIFEST_MAX_BYTES + 128 * 1024);
  const { stream, encryption } = await openArchive(source.stream, keys);
  const manifest = await readArchive(stream);
  return { archive, size: source.size, encryption, warnings: keyInClearWarning(encryption), manifest, compatibility: compatibility(manifest) };
}
