import { createHash } from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import * as tar from "tar";
import { createLocalDestination } from "../../src/destinations/local.js";
import { backup } from "../../src/ops/backup.js";
import { seedVolume, type SeedOptions } from "./volume.js";
import { tempDir } from "./temp.js";

export interface RawEntry {
  path: string;
  body?: Buffer;
  type?: string;
  linkpath?: string;
  mode?: number;
}

/** A seeded data volume and a real archive of it. */
export async function makeArchive(seed: SeedOptions = {}, gzip = false): Promise<{ dataDir: string; archive: string; backupsDir: string }> {
  const dataDir = tempDir("lds-vol-");
  await seedVolume(dataDir, seed);
  const backupsDir = tempDir("lds-backups-");
  const result = await backup({ dataDir, destination: createLocalDestination({ dir: backupsDir }), gzip });
  return { dataDir, archive: result.location, backupsDir };
}

/** Every entry of an archive, in order, with its body. */
export async function readEntries(archive: string): Promise<RawEntry[]> {
  const entries: RawEntry[] = [];
  await tar.t({
    file: archive,
    onReadEntry: (entry) => {
      const chunks: Buffer[] = [];
      const record: RawEntry = { path: entry.path, type: entry.type, mode: entry.mode };
      entries.push(record);
      entry.on("data", (c: Buffer) => chunks.push(c));
      entry.on("end", () => (record.body = Buffer.concat(chunks)));
    },
  });
  return entries;
}

/** Write entries as a tar exactly as given: hostile archives need headers no honest writer would produce. */
export function writeRawTar(file: string, entries: RawEntry[]): string {
  const blocks: Buffer[] = [];
  for (const e of entries) {
    const body = e.body ?? Buffer.alloc(0);
    const type = e.type ?? "File";
    const header = new tar.Header({
      path: e.path,
      mode: e.mode ?? 0o600,
      size: type === "File" ? body.length : 0,
      type: type as never,
      linkpath: e.linkpath,
      mtime: new Date(),
      uid: 0,
      gid: 0,
    });
    const block = Buffer.alloc(512);
    header.encode(block, 0);
    blocks.push(block);
    if (type === "File") blocks.push(body, Buffer.alloc((512 - (body.length % 512)) % 512));
  }
  blocks.push(Buffer.alloc(1024));
  fs.writeFileSync(file, Buffer.concat(blocks));
  return file;
}

export function sha256(body: Buffer): string {
  return createHash("sha256").update(body).digest("hex");
}

/** Rewrite an archive's manifest (and keep its checksums right unless told otherwise). */
export async function repack(archive: string, change: (manifest: Record<string, any>, entries: RawEntry[]) => void, name = "repacked.tar"): Promise<string> {
  const entries = await readEntries(archive);
  const manifest = JSON.parse(entries[0]!.body!.toString());
  change(manifest, entries);
  entries[0]!.body = Buffer.from(JSON.stringify(manifest));
  return writeRawTar(path.join(tempDir("lds-repack-"), name), entries);
}

/** Recompute the manifest's size and sha256 of every file from the entries' bodies. */
export function refreshChecksums(manifest: Record<string, any>, entries: RawEntry[]): void {
  for (const file of manifest.files) {
    const entry = entries.find((e) => e.path === file.path);
    if (entry?.body) Object.assign(file, { size: entry.body.length, sha256: sha256(entry.body) });
  }
}
