import type { Destination } from "../destinations/destination.js";
import { LdsError } from "../errors.js";
import { setting } from "../hints.js";

/**
 * Keep the newest `keep` archives and remove the older ones. Only names that are ours are ever listed, so no other
 * file or object at the destination can be touched. `keep` must be at least 1: "keep all" means not pruning.
 */
export async function prune(destination: Destination, keep: number): Promise<string[]> {
  assertKeep(keep);
  const removed: string[] = [];
  let seen = 0;
  for await (const archive of destination.list()) {
    if (++seen <= keep) continue;
    await destination.remove(archive.name);
    removed.push(archive.name);
  }
  return removed;
}

export function assertKeep(keep: number): void {
  if (!Number.isInteger(keep) || keep < 1) {
    throw new LdsError("validation_error", `--keep must be a whole number of at least 1 (got ${keep}).`, {
      hint: `To keep every archive, leave ${setting("keep")} out.`,
    });
  }
}
