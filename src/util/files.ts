import { createHash } from "node:crypto";
import fs from "node:fs";
import path from "node:path";

/** SHA-256 and size of a file, read synchronously in 1 MiB blocks: for a worker thread, where blocking is the point. */
export function hashFileSync(file: string): { sha256: string; size: number } {
  const hash = createHash("sha256");
  const buffer = Buffer.allocUnsafe(1024 * 1024);
  const fd = fs.openSync(file, "r");
  let size = 0;
  try {
    for (let n; (n = fs.readSync(fd, buffer, 0, buffer.length, null)) > 0; size += n) hash.update(buffer.subarray(0, n));
  } finally {
    fs.closeSync(fd);
  }
  return { sha256: hash.digest("hex"), size };
}

export function fsyncFile(file: string): void {
  const fd = fs.openSync(file, "r");
  try {
    fs.fsyncSync(fd);
  } finally {
    fs.closeSync(fd);
  }
}

/** fsync on the thread pool: flushing a large file takes long, and a server's event loop must not wait for it. */
export async function fsyncFileAsync(file: string): Promise<void> {
  const handle = await fs.promises.open(file, "r");
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
}

/** Make a rename or create inside `dir` durable. Some filesystems refuse to fsync a directory: that is not fatal. */
export function fsyncDirectory(dir: string): void {
  let fd: number | undefined;
  try {
    fd = fs.openSync(dir, "r");
    fs.fsyncSync(fd);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code !== "EINVAL" && code !== "EISDIR" && code !== "EPERM") throw err;
  } finally {
    if (fd !== undefined) fs.closeSync(fd);
  }
}

/** Write a small file so that readers see the old or the new content, never a torn one. */
export function writeFileAtomic(file: string, content: string, mode = 0o600): void {
  const temp = `${file}.tmp-${process.pid}`;
  fs.writeFileSync(temp, content, { mode });
  fsyncFile(temp);
  fs.renameSync(temp, file);
  fsyncDirectory(path.dirname(file));
}

/** Remove what a killed process left in `dir` under names starting with `prefix` (staging folders, temporary volumes). */
export function removeLeftovers(dir: string, prefix: string): void {
  for (const entry of fs.readdirSync(dir)) {
    if (entry.startsWith(prefix)) fs.rmSync(path.join(dir, entry), { recursive: true, force: true });
  }
}

/** Create a file that must not exist yet ("wx", mode 0600) with `bytes`, durably: the file and its directory fsynced. */
export function createFileDurably(file: string, bytes: Uint8Array): void {
  const fd = fs.openSync(file, "wx", 0o600);
  try {
    fs.writeSync(fd, bytes);
    fs.fsyncSync(fd);
  } finally {
    fs.closeSync(fd);
  }
  fsyncDirectory(path.dirname(file));
}

export function exists(file: string): boolean {
  try {
    fs.lstatSync(file);
    return true;
  } catch {
    return false;
  }
}
