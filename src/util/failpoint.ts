/**
 * Crash points for the crash-safety tests: with LDS_FAILPOINT=<name>, the process kills itself with SIGKILL at
 * that step, exactly as a power cut or the OOM killer would. Unset in production, where this is a no-op.
 */
export function failpoint(name: string): void {
  if (process.env.LDS_FAILPOINT === name) process.kill(process.pid, "SIGKILL");
}
