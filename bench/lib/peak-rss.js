import fs from "node:fs";

/**
 * A process's peak resident set so far (VmHWM, MiB), read from /proc while it runs: a server's high-water mark over
 * what it has done since it started (its worker threads included; child processes such as git are not).
 */
export function peakRssMiB(pid) {
  const status = fs.readFileSync(`/proc/${pid}/status`, "utf8");
  const kib = /^VmHWM:\s+(\d+) kB/m.exec(status);
  if (!kib) throw new Error(`no VmHWM in /proc/${pid}/status`);
  return Number(kib[1]) / 1024;
}
