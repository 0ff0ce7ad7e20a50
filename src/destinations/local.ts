import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { pipeline } from "node:stream/promises";
import { LdsError, fromSystemError } from "../errors.js";
import { fsyncDirectory, fsyncFileAsync } from "../util/files.js";
import { processExists } from "../util/process-exists.js";
import { checkLocalDirectory } from "./local-path.js";
import { randomBytes } from "node:crypto";
import { assertArchiveName, isArchiveName, notFound, probeName, type ArchiveInfo, type Destination } from "./destination.js";

export interface LocalDestinationOptions {
  /** Directory the archives go to; created (mode 0700) on the first backup. It may be a mounted network path. */
  dir: string;
}

const TEMP_SUFFIX = ".tmp";

/**
 * Archives in a directory. Written under a hidden temporary name, fsynced, then linked to the final name (which
 * cannot replace an existing archive) and the directory fsynced: a reader sees a whole archive or none.
 */
export function createLocalDestination({ dir: rawDir }: LocalDestinationOptions): Destination {
  const dir = checkLocalDirectory(rawDir);
  const at = (name: string) => path.join(dir, name);

  async function info(name: string): Promise<ArchiveInfo> {
    try {
      const stat = await fs.promises.stat(at(name));
      return { name, size: stat.size, modifiedAt: stat.mtime.toISOString(), location: at(name) };
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === "ENOENT") throw notFound(name, dir);
      throw fromSystemError(err, at(name));
    }
  }

  return {
    kind: "local",
    description: dir,

    async put(name, body, opts = {}) {
      assertArchiveName(name);
      try {
        await fs.promises.mkdir(dir, { recursive: true, mode: 0o700 });
      } catch (err) {
        body.destroy();
        throw fromSystemError(err, dir);
      }
      removeAbandonedTemps(dir);
      const temp = at(`.${name}.${os.hostname()}-${process.pid}${TEMP_SUFFIX}`);
      try {
        await pipeline(body, fs.createWriteStream(temp, { flags: "wx", mode: 0o600 }), { signal: opts.signal });
        await fsyncFileAsync(temp);
        publish(temp, at(name));
        fsyncDirectory(dir);
      } catch (err) {
        fs.rmSync(temp, { force: true });
        if ((err as Error).name === "AbortError") throw err;
        throw fromSystemError(err, `the archive ${at(name)}`);
      }
      return info(name);
    },

    async get(name, opts = {}) {
      assertArchiveName(name);
      await info(name);
      const [start, end] = opts.range ?? [undefined, undefined];
      return fs.createReadStream(at(name), { start, end, signal: opts.signal, highWaterMark: 1024 * 1024 });
    },

    stat(name) {
      assertArchiveName(name);
      return info(name);
    },

    async *list() {
      let names: string[];
      try {
        names = await fs.promises.readdir(dir);
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code === "ENOENT") return;
        throw fromSystemError(err, dir);
      }
      for (const name of names.filter(isArchiveName).sort().reverse()) {
        try {
          yield await info(name);
        } catch (err) {
          // Removed by a concurrent prune between readdir and stat: not an error for a listing.
          if (!(err instanceof LdsError && err.code === "archive_not_found")) throw err;
        }
      }
    },

    async remove(name) {
      assertArchiveName(name);
      try {
        await fs.promises.rm(at(name), { force: true });
      } catch (err) {
        throw fromSystemError(err, at(name));
      }
    },

    async removeIncomplete() {
      return fs.existsSync(dir) ? removeAbandonedTemps(dir) : [];
    },

    async probe() {
      const file = at(probeName());
      const body = randomBytes(64);
      let step = `creating ${dir}`;
      try {
        await fs.promises.mkdir(dir, { recursive: true, mode: 0o700 });
        step = `writing the probe file ${file}`;
        await fs.promises.writeFile(file, body, { flag: "wx", mode: 0o600 });
        step = `reading back ${file}`;
        const read = await fs.promises.readFile(file);
        if (!read.equals(body)) throw new LdsError("destination_error", `${file} read back other bytes than were written.`, { hint: "Check the filesystem or network share behind that path." });
        step = `deleting ${file}`;
        await fs.promises.rm(file);
      } catch (err) {
        await fs.promises.rm(file, { force: true }).catch(() => {});
        throw err instanceof LdsError ? err : fromSystemError(err, `${dir} (while ${step})`);
      }
    },
  };
}

/** No-clobber publish: link fails if the name exists. Filesystems without hard links get an exclusive rename. */
function publish(temp: string, final: string): void {
  try {
    fs.linkSync(temp, final);
    fs.rmSync(temp);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === "EEXIST") {
      throw new LdsError("destination_error", `An archive named ${path.basename(final)} already exists.`, {
        hint: "Another backup wrote that name in the same second; run the backup again.",
      });
    }
    if (code !== "EPERM" && code !== "ENOTSUP" && code !== "EOPNOTSUPP" && code !== "EXDEV") throw err;
    if (fs.existsSync(final)) throw err;
    fs.renameSync(temp, final);
  }
}

/** Temp files left by a backup process of this host that no longer runs (kill -9, power loss). */
function removeAbandonedTemps(dir: string): string[] {
  const host = os.hostname();
  const removed: string[] = [];
  for (const entry of fs.readdirSync(dir)) {
    const match = /^\.lds-backup-\d{8}T\d{6}Z\.tar(?:\.gz)?\.(.+)-(\d+)\.tmp$/.exec(entry);
    if (!match || match[1] !== host) continue;
    const pid = Number(match[2]);
    if (pid !== process.pid && !processExists(pid)) {
      fs.rmSync(path.join(dir, entry), { force: true });
      removed.push(entry);
    }
  }
  return removed;
}
