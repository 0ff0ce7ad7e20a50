import type { OpenedDatabases, RestoredVolumeView } from "../engine.js";
import { sealedSecrets } from "../../store/sqlite/secrets-table.js";
import { answer } from "./canaries.js";
import { checkFullTextIndex, servedSnippetIdPages, snippetCountsOfSnapshot } from "./manifest-view.js";
import { sqliteDatabaseOf } from "./open-databases.js";

/** What a restore drill reads from the volume it restored (ops/restore-drill.ts compares it with the manifest). */
export function restoredView(opened: OpenedDatabases): RestoredVolumeView {
  const db = sqliteDatabaseOf(opened.store);
  return {
    checkFullTextIndex: async () => checkFullTextIndex(db),
    snippetCounts: async () => snippetCountsOfSnapshot(db),
    async *servedSnippetIdPages(skip) {
      yield* servedSnippetIdPages(db, skip);
    },
    sealedSecrets: async () => sealedSecrets(db),
    canaryAnswer: async (libraryId, query) => answer(db, libraryId, query),
  };
}
