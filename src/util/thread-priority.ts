import fs from "node:fs";
import os from "node:os";

/**
 * Background work yields the CPU to the server's requests: on two cores a snapshot or a hash at full priority made
 * every request wait its turn. Linux gives each thread its own nice value, set through the thread's id; elsewhere
 * (or without /proc) the thread keeps the process's priority. Call it from the thread to lower.
 */
export function lowerThisThreadsPriority(): void {
  try {
    const threadId = Number(fs.readlinkSync("/proc/thread-self").split("/").pop());
    if (Number.isInteger(threadId) && threadId > 0) os.setPriority(threadId, 10);
  } catch {
    // Not Linux, or not allowed: run at the process's priority.
  }
}
