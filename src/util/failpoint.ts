/**
 * Crash points for the crash-safety tests: with LDS_FAILPOINT=<name>, the process kills itself with SIGKILL at
 * that step, exactly as a power cut or the OOM killer would; with LDS_FAILPOINT=@<n>, at the n-th crash point it
 * passes, whatever its name (a test walks every step of a command that way). Unset in production: a no-op.
 *
 * The shell reads LDS_FAILPOINT and arms it here (cli/main.ts), as it does every setting; a worker thread that has
 * crash points is given the armed name in its workerData (vectors/knn-worker.ts). Nothing here reads the environment.
 */
let armed: string | undefined;
let passed = 0;

/** Arm the crash point `name` (LDS_FAILPOINT's value), or disarm with undefined or "". */
export function armFailpoint(name: string | undefined): void {
  armed = name || undefined;
  passed = 0;
}

/** The armed crash point, for a worker thread to arm the same in its own module instance. */
export function armedFailpoint(): string | undefined {
  return armed;
}

export function failpoint(name: string): void {
  if (!armed) return;
  passed++;
  if (armed === name || armed === `@${passed}`) process.kill(process.pid, "SIGKILL");
}

/** With LDS_FAILPOINT=<name>, block this thread for a minute at that step: a hung dependency, for timeout tests. */
export function stallpoint(name: string, ms = 60_000): void {
  if (armed === name) Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
}

/** With LDS_FAILPOINT=<name>, end this thread (or process) at that step with `code`: a thread that dies, for tests. */
export function exitpoint(name: string, code: number): void {
  if (armed === name) process.exit(code);
}

/**
 * With LDS_FAILPOINT=<name>, wait at that step without blocking the thread: work that stays under way while the
 * server keeps answering, for tests of what may and may not overlap it.
 */
export async function delaypoint(name: string, ms = 30_000, signal?: AbortSignal): Promise<void> {
  if (armed !== name || signal?.aborted) return;
  // Ended early by `signal`: a shutdown interrupts the work under way here as it would anywhere else.
  await new Promise<void>((resolve) => {
    const timer = setTimeout(done, ms);
    signal?.addEventListener("abort", done, { once: true });
    function done() {
      clearTimeout(timer);
      signal?.removeEventListener("abort", done);
      resolve();
    }
  });
}
