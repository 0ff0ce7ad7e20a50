import { compatibility, type Compatibility } from "../archive/compatibility.js";
import { MANIFEST_MAX_BYTES, type Manifest } from "../archive/manifest.js";
import { readArchive } from "../archive/read-archive.js";
import type { Destination } from "../destinations/destination.js";
import { openSource } from "./archive-file.js";

export interface InspectResult {
  archive: string;
  size: number;
  manifest: Manifest;
  compatibility: Compatibility;
}

/** What an archive holds, from its manifest alone: reads only the first entry, however large the archive. */
export async function inspect(archive: string, remote?: { destination: Destination; name: string }): Promise<InspectResult> {
  const { stream, size } = await openSource(archive, remote, MANIFEST_MAX_BYTES + 64 * 1024);
  const manifest = await readArchive(stream);
  return { archive, size, manifest, compatibility: compatibility(manifest) };
}
