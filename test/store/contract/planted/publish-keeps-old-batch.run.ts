/**
 * Run only by ../planted-bug.test.ts (through vitest.planted.config.ts), never by the normal suite: the snippets part
 * of the contract against a copy of the in-memory engine with one planted bug. It is expected to FAIL.
 */
import { LdsError } from "../../../../src/errors.js";
import { createMemoryStore } from "../../memory-store/memory-store.js";
import { describeSnippets } from "../snippets.contract.js";

describeSnippets(async () => {
  const { store, tables, seed } = createMemoryStore();
  const buggy = {
    ...store,
    snippets: {
      ...store.snippets,
      // The planted bug: the new batch goes live, but the batch it replaces is not retired.
      publishBatch: async (libraryId: string, version: string, batch: number) => {
        const b = tables.batches.get(batch);
        if (b?.libraryId !== libraryId || b.version !== version || b.state !== "writing") throw new LdsError("ingestion_superseded", "superseded");
        b.state = "live";
      },
    },
  };
  return { store: buggy, seed, close: async () => {} };
});
