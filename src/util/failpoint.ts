/**
 * Crash points for the crash-safety tests: with LDS_FAILPOINT=<name>, the process kills itself with SIGKILL at
 * that step, exactly as a power cut or the OOM killer would. Unset in production, where this is a no-op.
 */
export function failpoint(name: string): void {
  if (process.env.LDS_FAILPOINT === name) process.kill(process.pid, "SIGKILL");
}

/** With LDS_FAILPOINT=<name>, block this thread for a minute at that step: a hung dependency, for timeout tests. */
export function stallpoint(name: string): void {
  if (process.env.LDS_FAILPOINT === name) Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 60_000);
}
