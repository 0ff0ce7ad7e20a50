import { INGESTING_LOCK } from "../../store/postgres/job-leases.js";
import type { Store } from "../../store/store.js";
import type { ServingHold } from "./serving-hold.js";

/**
 * The store of a command that ingests without a job (lds ingest git): before it opens a batch of a library version,
 * it holds INGESTING_LOCK for that version on its serving-lock connection, until it exits. A replica that starts
 * meanwhile retires unfinished batches no job's lease covers (retireAbandonedBatches), but not this one.
 */
export function ingestingStore(store: Store, hold: ServingHold): Store {
  const open = store.snippets.openBatch;
  const openBatch = async (libraryId: string, version: string): Promise<number> => {
    await hold.holdAlso(INGESTING_LOCK, `${libraryId}\n${version}`);
    return open(libraryId, version);
  };
  return { ...store, snippets: { ...store.snippets, openBatch } };
}
