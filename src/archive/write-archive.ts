import fs from "node:fs";
import path from "node:path";
import type { Readable } from "node:stream";
import * as tar from "tar";
import { APP_VERSION } from "../version.js";
import { ARCHIVE_FILES, FORMAT_NAME, FORMAT_VERSION, MANIFEST_PATH, type Canary, type Manifest, type ManifestFile, type ManifestLibrary } from "./manifest.js";

/** A snapshot staged for archiving (snapshot/ makes one): the files laid out as in the archive, and what they hold. */
export interface StagedSnapshot {
  /** Folder holding db/lds.db, vectors/vectors.db and key/secret.key, laid out as in the archive. */
  dir: string;
  schemaVersion: number;
  libraries: ManifestLibrary[];
  partial: string[];
  canaries: Canary[];
}

/** Write manifest.json beside the staged files, with their hashes. */
export async function writeManifest(snapshot: StagedSnapshot, createdAt: Date, files: ManifestFile[], appVersion = APP_VERSION): Promise<Manifest> {
  const manifest: Manifest = {
    format: FORMAT_NAME,
    formatVersion: FORMAT_VERSION,
    appVersion,
    schemaVersion: snapshot.schemaVersion,
    createdAt: createdAt.toISOString(),
    libraries: snapshot.libraries,
    partial: snapshot.partial,
    files,
    canaries: snapshot.canaries,
  };
  fs.writeFileSync(path.join(snapshot.dir, MANIFEST_PATH), JSON.stringify(manifest, null, 2) + "\n", { mode: 0o600 });
  return manifest;
}

/**
 * Stream the staged snapshot as a tar, manifest first so a reader learns what it holds from the first few KB.
 * `portable` drops owner names and ids; gzip level 1 because the vectors barely compress (DESIGN §6).
 * `readSize` is the size of each file read, hence of each chunk the stream hands on.
 */
export function archiveStream(stagingDir: string, gzip: boolean, onEntryWritten?: (relativePath: string) => void, readSize = 1024 * 1024): Readable {
  const stream = tar.create(
    {
      cwd: stagingDir,
      portable: true,
      gzip: gzip ? { level: 1 } : false,
      noDirRecurse: true,
      maxReadSize: readSize,
      onWriteEntry: (entry) => entry.on("end", () => onEntryWritten?.(entry.path)),
    },
    [MANIFEST_PATH, ...Object.values(ARCHIVE_FILES)],
  );
  return stream as unknown as Readable;
}
