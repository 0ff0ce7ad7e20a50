import type { StoredSnippet } from "../../store/records.js";
import type { Store } from "../../store/store.js";

/**
 * A replica's store whose snippet loads (a context answer's rows, on every request) read the replica's own search
 * files when they hold every id asked: a request ranks a library version's batch only once PostgreSQL names it live
 * and the files hold it, and a batch never changes once held, so the rows are the records' own, without a round trip
 * that carried ~200 rows of text (2.5-4 ms of the database's time alone, measured in bench/pg-serve.js). When any id
 * is missing (the files moved on to a newer batch mid-request, or dropped the version), the records answer, as before.
 */
export function loadingHeldSnippets(store: Store, loadHeld: (libraryId: string, version: string, ids: number[]) => StoredSnippet[]): Store {
  const fromRecords = store.snippets.load;
  const load = async (libraryId: string, version: string, ids: number[]): Promise<StoredSnippet[]> => {
    const held = loadHeld(libraryId, version, ids);
    return held.length === ids.length ? held : fromRecords(libraryId, version, ids);
  };
  return { ...store, snippets: { ...store.snippets, load } };
}
