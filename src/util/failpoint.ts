/**
 * Crash points for the crash-safety tests: with LDS_FAILPOINT=<name>, the process kills itself with SIGKILL at
 * that step, exactly as a power cut or the OOM killer would; with LDS_FAILPOINT=@<n>, at the n-th crash point it
 * passes, whatever its name (a test walks every step of a command that way). Unset in production: a no-op.
 */
let passed = 0;
export function failpoint(name: string): void {
  const wanted = process.env.LDS_FAILPOINT;
  if (!wanted) return;
  passed++;
  if (wanted === name || wanted === `@${passed}`) process.kill(process.pid, "SIGKILL");
}

/** With LDS_FAILPOINT=<name>, block this thread for a minute at that step: a hung dependency, for timeout tests. */
export function stallpoint(name: string, ms = 60_000): void {
  if (process.env.LDS_FAILPOINT === name) Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
}

/**
 * With LDS_FAILPOINT=<name>, wait at that step without blocking the thread: work that stays under way while the
 * server keeps answering, for tests of what may and may not overlap it.
 */
export async function delaypoint(name: string, ms = 30_000): Promise<void> {
  if (process.env.LDS_FAILPOINT === name) await new Promise((resolve) => setTimeout(resolve, ms));
}
