import fs from "node:fs";
import os from "node:os";
import { LdsError, fromSystemError, type ErrorCode } from "../errors.js";
import { processExists } from "../util/process-exists.js";

/** What a lock file records about its holder, so another process can tell a live holder from a dead one. */
export interface LockOwner {
  pid: number;
  hostname: string;
  /** Kernel start time of the process (Linux), so a recycled pid is not mistaken for the holder. */
  processStart: string | null;
  purpose: string;
  since: string;
}

export interface HeldLock {
  readonly file: string;
  release(): void;
}

export interface AcquireOptions {
  purpose: string;
  /** Error code when the lock is held by a live process. */
  busyCode: ErrorCode;
  /** One line telling the operator how to resolve the conflict. */
  busyHint: (owner: LockOwner) => string;
  busyMessage: (owner: LockOwner) => string;
}

/**
 * Take a lock file with O_EXCL. A lock left by a dead process on this host is recovered; one held by a live
 * process, or written on another host (a shared network volume), is refused with the holder's details.
 */
export function acquireLock(file: string, options: AcquireOptions): HeldLock {
  const me = currentOwner(options.purpose);
  for (let attempt = 0; attempt < 3; attempt++) {
    try {
      fs.writeFileSync(file, JSON.stringify(me) + "\n", { flag: "wx", mode: 0o600 });
      return { file, release: () => releaseIfOurs(file, me) };
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== "EEXIST") throw fromSystemError(err, file);
    }
    const owner = readOwner(file);
    if (owner && isAlive(owner)) {
      throw new LdsError(options.busyCode, options.busyMessage(owner), { hint: options.busyHint(owner) });
    }
    removeStale(file, owner);
  }
  throw new LdsError(options.busyCode, `Could not take ${file}: other processes keep racing for it.`, {
    hint: "Make sure only one LDS process is started at a time on this data volume, then try again.",
  });
}

export function readOwner(file: string): LockOwner | null {
  try {
    const parsed = JSON.parse(fs.readFileSync(file, "utf8")) as LockOwner;
    return typeof parsed.pid === "number" ? parsed : null;
  } catch {
    // Missing, half-written (a crash between create and write) or garbage: treated as stale.
    return null;
  }
}

/** Whether the lock holder still runs. A holder on another host is assumed alive: we cannot check it. */
export function isAlive(owner: LockOwner): boolean {
  if (owner.hostname !== os.hostname()) return true;
  if (!processExists(owner.pid)) return false;
  return owner.processStart === null || owner.processStart === processStartTime(owner.pid);
}

function removeStale(file: string, seen: LockOwner | null): void {
  // Rename first, then check that what we moved is the stale lock we judged, so two recovering processes cannot
  // delete each other's fresh locks; a fresh lock moved by mistake is put back at once.
  const aside = `${file}.stale-${process.pid}`;
  try {
    fs.renameSync(file, aside);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "ENOENT") return;
    throw fromSystemError(err, file);
  }
  const moved = readOwner(aside);
  if (moved && seen && (moved.pid !== seen.pid || moved.since !== seen.since) && isAlive(moved)) {
    fs.renameSync(aside, file);
    return;
  }
  fs.rmSync(aside, { force: true });
}

function releaseIfOurs(file: string, me: LockOwner): void {
  const owner = readOwner(file);
  if (owner && owner.pid === me.pid && owner.since === me.since) fs.rmSync(file, { force: true });
}

function currentOwner(purpose: string): LockOwner {
  return {
    pid: process.pid,
    hostname: os.hostname(),
    processStart: processStartTime(process.pid),
    purpose,
    since: new Date().toISOString(),
  };
}

function processStartTime(pid: number): string | null {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, "utf8");
    // Field 22 (starttime) counts from the field after the parenthesised command name, which may hold spaces.
    return stat.slice(stat.lastIndexOf(")") + 2).split(" ")[19] ?? null;
  } catch {
    return null;
  }
}
