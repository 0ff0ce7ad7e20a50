import { compatibility, type Compatibility } from "../archive/compatibility.js";
import type { Manifest } from "../archive/manifest.js";
import { readArchive } from "../archive/read-archive.js";
import { openArchiveFile } from "./archive-file.js";

export interface InspectResult {
  archive: string;
  size: number;
  manifest: Manifest;
  compatibility: Compatibility;
}

/** What an archive holds, from its manifest alone: reads only the first entry, however large the archive. */
export async function inspect(archive: string): Promise<InspectResult> {
  const { stream, size } = openArchiveFile(archive);
  const manifest = await readArchive(stream);
  return { archive, size, manifest, compatibility: compatibility(manifest) };
}
