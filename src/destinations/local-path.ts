import fs from "node:fs";
import path from "node:path";
import { LdsError } from "../errors.js";

/** Kernel filesystems that hold no files: writing there fails or, for mkdir on /proc under Node 20, never returns. */
const VIRTUAL_ROOTS = ["/proc", "/sys", "/dev"];
const VIRTUAL_FS_TYPES = new Map<number, string>([
  [0x9fa0, "proc"],
  [0x62656572, "sysfs"],
  [0x1cd1, "devpts"],
  [0x27e0eb, "cgroup"],
  [0x63677270, "cgroup2"],
  [0x64626720, "debugfs"],
  [0x73636673, "securityfs"],
  [0x74726163, "tracefs"],
  [0xcafe4a11, "bpf"],
]);

/**
 * Check a local destination before anything is created in it (issue 11, item 5): an existing path must be a
 * directory, and neither the path nor the nearest folder that exists may be on a kernel's virtual filesystem.
 * Reads only (stat, statfs, realpath): none of them can hang the way mkdir on /proc does.
 */
export function checkLocalDirectory(rawDir: string): string {
  const dir = path.resolve(rawDir);
  let existing = dir;
  while (!fs.existsSync(existing) && path.dirname(existing) !== existing) existing = path.dirname(existing);
  const real = safeRealpath(existing);
  for (const candidate of [dir, real]) {
    const root = VIRTUAL_ROOTS.find((r) => candidate === r || candidate.startsWith(`${r}/`));
    if (root) throw refused(dir, `it is under ${root}, a virtual filesystem of the kernel`);
  }
  const type = VIRTUAL_FS_TYPES.get(Number(fs.statfsSync(real).type));
  if (type) throw refused(dir, `it is on a ${type} filesystem`);
  if (existing === dir && !fs.statSync(real).isDirectory()) throw refused(dir, "it exists and is not a directory");
  return dir;
}

function safeRealpath(file: string): string {
  try {
    return fs.realpathSync(file);
  } catch {
    return file;
  }
}

function refused(dir: string, why: string): LdsError {
  return new LdsError("validation_error", `The backup destination ${dir} cannot hold archives: ${why}.`, {
    hint: "Choose a directory on a real disk or a mounted network share.",
  });
}
