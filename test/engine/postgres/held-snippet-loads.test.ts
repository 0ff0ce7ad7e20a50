import { expect, it } from "vitest";
import { loadingHeldSnippets } from "../../../src/engine/postgres/held-snippet-loads.js";
import type { Store } from "../../../src/store/store.js";
import { newLibrary } from "../../store/contract/libraries.contract.js";
import { publish, replicaWorld, rows } from "./replica-fixtures.js";

// A replica loads a context answer's rows from its search files when they hold every id, else from the records.
const world = replicaWorld();

/** The records' store, counting the loads that reach PostgreSQL. */
function countingLoads(store: Store): { store: Store; loads: () => number } {
  let loads = 0;
  const load: Store["snippets"]["load"] = (...args) => {
    loads++;
    return store.snippets.load(...args);
  };
  return { store: { ...store, snippets: { ...store.snippets, load } }, loads: () => loads };
}

it("rows of the batch the files hold come from the files, in the order asked, as the records have them; anything else from the records", async () => {
  const r = await world.replica();
  const records = world.records.store;
  await records.libraries.create(newLibrary("/acme/widgets"));
  const first = await publish(records, "/acme/widgets", "", rows("/acme/widgets", 40));
  await r.ensureLive("/acme/widgets", "", first.batch.batch);
  const counted = countingLoads(records);
  const replica = loadingHeldSnippets(counted.store, r.loadHeld);

  const asked = [...first.ids].reverse().slice(0, 25);
  const expected = await records.snippets.load("/acme/widgets", "", asked);
  expect(expected.map((s) => s.id)).toEqual(asked);
  expect(await replica.snippets.load("/acme/widgets", "", asked)).toEqual(expected);
  expect(counted.loads()).toBe(0);

  // An id the files do not hold (another version's, unknown): the records answer, as they always did.
  const other = await publish(records, "/acme/widgets", "v2", rows("/acme/widgets", 3, 1));
  expect(await replica.snippets.load("/acme/widgets", "", [...asked, other.ids[0]!])).toEqual(expected);
  expect(counted.loads()).toBe(1);

  // The version republished and held here: the old batch's ids are no longer served, by either.
  const second = await publish(records, "/acme/widgets", "", rows("/acme/widgets", 10, 2));
  await r.ensureLive("/acme/widgets", "", second.batch.batch);
  expect(await replica.snippets.load("/acme/widgets", "", asked)).toEqual([]);
  expect(counted.loads()).toBe(2);
  const again = await replica.snippets.load("/acme/widgets", "", second.ids);
  expect(again.map((s) => s.id)).toEqual(second.ids);
  expect(again).toEqual(await records.snippets.load("/acme/widgets", "", second.ids));
  expect(counted.loads()).toBe(2);
});
