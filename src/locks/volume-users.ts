import { randomBytes } from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import type { DataVolume } from "../config/data-volume.js";
import { fromSystemError } from "../errors.js";
import { writeFileAtomic } from "../util/files.js";
import { currentOwner, isAlive, readOwner, type LockOwner } from "./lock-file.js";

/**
 * Short commands that open a volume beside a running server (`lds keys`, `lds backup`, …) register here, one file
 * each, so that a restore can see them. Together with server.lock this is a readers-writer lock across processes:
 * a user registers, then checks server.lock; a restore takes server.lock, then checks the users. Whichever comes
 * second sees the other, so a command never runs during a restore (issue 11, item 3).
 */
export interface VolumeUser {
  release(): void;
}

export function registerVolumeUser(volume: DataVolume, purpose: string): VolumeUser {
  const dir = volume.users;
  const file = path.join(dir, `${process.pid}-${randomBytes(4).toString("hex")}.json`);
  const me = currentOwner(purpose);
  try {
    fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
    writeFileAtomic(file, JSON.stringify(me) + "\n");
  } catch (err) {
    throw fromSystemError(err, dir);
  }
  return { release: () => fs.rmSync(file, { force: true }) };
}

/** The registered users still running; records of dead ones are removed on the way. */
export function liveVolumeUsers(volume: DataVolume): LockOwner[] {
  const dir = volume.users;
  let names: string[];
  try {
    names = fs.readdirSync(dir).filter((n) => n.endsWith(".json"));
  } catch {
    return [];
  }
  const live: LockOwner[] = [];
  for (const name of names) {
    const owner = readOwner(path.join(dir, name));
    if (owner && isAlive(owner)) live.push(owner);
    else if (owner) fs.rmSync(path.join(dir, name), { force: true });
  }
  return live;
}
