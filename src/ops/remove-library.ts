import { LdsError } from "../errors.js";
import type { OpenVolume } from "../volume/open-volume.js";
import { action } from "../hints.js";

/**
 * Remove a library for good: refused while one of its jobs waits or runs (the job would write into a library
 * that is gone). The records go in one transaction, then the vectors: vectors without snippets are invisible.
 */
export async function removeLibrary(volume: OpenVolume, libraryId: string): Promise<{ snippets: number }> {
  const { store } = volume;
  if (!(await store.libraries.find(libraryId))) {
    throw new LdsError("library_not_found", `No library ${libraryId}.`, { hint: `List them: ${action("library.list")}.` });
  }
  const snippetIds = await store.libraries.remove(libraryId);
  volume.vectors.remove(snippetIds);
  return { snippets: snippetIds.length };
}
