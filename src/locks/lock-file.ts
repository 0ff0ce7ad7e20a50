import { randomBytes } from "node:crypto";
import fs from "node:fs";
import os from "node:os";
import { LdsError, fromSystemError, type ErrorCode } from "../errors.js";
import { processExists } from "../util/process-exists.js";
import { stallpoint } from "../util/failpoint.js";
import { writeFileAtomic } from "../util/files.js";

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
  /** Say what the holder does now (a starting server that has finished recovering): replaced whole, atomically. */
  setPurpose(purpose: string): void;
  /** Let go. A lock held on a database's connection answers the Promise of its unlock: await it where the next taker may follow at once. */
  release(): void | Promise<void>;
}

export interface AcquireOptions {
  purpose: string;
  /** Error code when the lock is held by a live process (it may depend on what the holder does; null: unknown). */
  busyCode: ErrorCode | ((owner: LockOwner | null) => ErrorCode);
  /** One line telling the operator how to resolve the conflict. */
  busyHint: (owner: LockOwner) => string;
  busyMessage: (owner: LockOwner) => string;
}

/**
 * Take a lock file atomically: the owner record is written to a private temporary file and then linked to the
 * lock's name, which fails if the lock exists, so that no reader ever sees a lock file without its owner. A lock
 * left by a dead process on this host is recovered; one held by a live process, or written on another host (a
 * shared network volume), is refused with the holder's details.
 */
export function acquireLock(file: string, options: AcquireOptions): HeldLock {
  const me = currentOwner(options.purpose);
  for (let attempt = 0; attempt < 50; attempt++) {
    if (linkNew(file, JSON.stringify(me) + "\n")) {
      return {
        file,
        setPurpose: (purpose) => {
          me.purpose = purpose;
          writeFileAtomic(file, JSON.stringify(me) + "\n");
        },
        release: () => releaseIfOurs(file, me),
      };
    }
    const owner = readOwner(file);
    if (owner && isAlive(owner)) {
      throw new LdsError(busyCode(options, owner), options.busyMessage(owner), { hint: options.busyHint(owner) });
    }
    removeStale(file, owner);
  }
  throw new LdsError(busyCode(options, null), `Could not take ${file}: other processes keep racing for it.`, {
    hint: "Make sure only one LDS process is started at a time on this data volume, then try again.",
  });
}

function busyCode(options: AcquireOptions, owner: LockOwner | null): ErrorCode {
  return typeof options.busyCode === "function" ? options.busyCode(owner) : options.busyCode;
}

/** Create `file` holding `content`, all at once, only if it does not exist. False when it exists. */
function linkNew(file: string, content: string): boolean {
  const temp = `${file}.new-${process.pid}-${randomBytes(4).toString("hex")}`;
  try {
    fs.writeFileSync(temp, content, { flag: "wx", mode: 0o600 });
    stallpoint("lock-before-link", 8000);
    fs.linkSync(temp, file);
    return true;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "EEXIST") return false;
    throw fromSystemError(err, file);
  } finally {
    fs.rmSync(temp, { force: true });
  }
}

export function readOwner(file: string): LockOwner | null {
  try {
    const parsed = JSON.parse(fs.readFileSync(file, "utf8")) as LockOwner;
    return typeof parsed.pid === "number" ? parsed : null;
  } catch {
    // Missing, or garbage (locks are written whole, so not ours): treated as stale.
    return null;
  }
}

/** Whether the lock holder still runs. A holder on another host is assumed alive: we cannot check it. */
export function isAlive(owner: LockOwner): boolean {
  if (owner.hostname !== os.hostname()) return true;
  if (!processExists(owner.pid)) return false;
  return owner.processStart === null || owner.processStart === processStartTime(owner.pid);
}

/**
 * Remove a lock judged stale, under a short-lived break lock, and only if it still holds what was judged: two
 * processes recovering the same stale lock can then never remove the fresh lock one of them (or a third) took.
 */
function removeStale(file: string, judged: LockOwner | null): void {
  const breaker = `${file}.break`;
  if (!linkNew(breaker, JSON.stringify(currentOwner("break")) + "\n")) {
    // Held for microseconds by a live process; one older than this was left by a process that died inside it.
    if (ageMs(breaker) > BREAK_LOCK_STALE_MS) fs.rmSync(breaker, { force: true });
    else Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 20);
    return;
  }
  try {
    const now = readOwner(file);
    const same = judged === null ? now === null : now !== null && now.pid === judged.pid && now.since === judged.since;
    if (same && (now === null || !isAlive(now))) fs.rmSync(file, { force: true });
  } finally {
    fs.rmSync(breaker, { force: true });
  }
}

const BREAK_LOCK_STALE_MS = 10_000;

function ageMs(file: string): number {
  try {
    return Date.now() - fs.statSync(file).mtimeMs;
  } catch {
    return 0;
  }
}

function releaseIfOurs(file: string, me: LockOwner): void {
  const owner = readOwner(file);
  if (owner && owner.pid === me.pid && owner.since === me.since) fs.rmSync(file, { force: true });
}

export function currentOwner(purpose: string): LockOwner {
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
