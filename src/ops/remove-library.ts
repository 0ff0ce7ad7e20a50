import { LdsError } from "../errors.js";
import type { OpenVolume } from "../volume/open-volume.js";
import { action } from "../hints.js";
import { purgeRetiredBatches } from "../indexing/purge-retired.js";
import { libraryBusy } from "../store/record-values.js";
import { recordAccountChange } from "./account-audit.js";
import type { Actor } from "./actor.js";

/**
 * Remove a library for good: refused while one of its jobs waits or runs (the job would write into a library
 * that is gone). A large library's rows would go in one transaction with its record (the cascade), stopping a
 * server for seconds; so each version is first emptied at once, by publishing an empty snippet batch (readers see
 * nothing from then on), its rows are deleted a chunk at a time, and then the records go in one small transaction,
 * with any rows written meanwhile, whose vectors go last: vectors without snippets are invisible. Audit-logged
 * with who removed it and how many snippets went.
 */
export async function removeLibrary(volume: OpenVolume, actor: Actor, libraryId: string): Promise<{ snippets: number }> {
  const { store } = volume;
  if (!(await store.libraries.find(libraryId))) {
    throw new LdsError("library_not_found", `No library ${libraryId}.`, { hint: `List them: ${action("library.list")}.` });
  }
  // Checked before anything is emptied (and again by the store, in the transaction that removes the records).
  if (await store.jobs.hasAnyPending(libraryId)) throw libraryBusy(libraryId);
  let snippets = 0;
  for (const version of await store.snippets.versions(libraryId)) {
    snippets += await store.snippets.count(libraryId, version);
    const replaced = await store.snippets.liveBatch(libraryId, version);
    await store.snippets.publishBatch(libraryId, version, await store.snippets.openBatch(libraryId, version));
    // As after any publication (indexing/replace-snippets.ts): the search threads drop the emptied batch's in-memory
    // parts (vector copy, word index) now, not at their sweep a minute later.
    volume.index.retire({ libraryId, version, batch: replaced });
  }
  await purgeRetiredBatches(volume);
  await volume.index.removeLibrary(libraryId, await store.libraries.remove(libraryId));
  await recordAccountChange(store, actor, "library.remove", libraryId, { snippets });
  return { snippets };
}
