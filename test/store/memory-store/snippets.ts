import { LdsError } from "../../../src/errors.js";
import { requireVectorPerRow } from "../../../src/store/record-values.js";
import type { EmbeddableSnippet } from "../../../src/store/records.js";
import type { SnippetStore } from "../../../src/store/store.js";
import { leaseLost } from "../../../src/store/record-values.js";
import { compare } from "./accounts.js";
import { holdsLease, versionHeld } from "./jobs.js";
import { nextId, type MemoryTables } from "./tables.js";

/** The store's snippets and their batches, without the search index (its own contract, index/search-index.ts). */
export type SnippetRecords = Omit<SnippetStore, "tidyIndex">;

export function snippetStore(tables: MemoryTables): SnippetRecords {
  const batchOf = (libraryId: string, version: string, state: string) => [...tables.batches.values()].find((b) => b.libraryId === libraryId && b.version === version && b.state === state);
  const liveBatch = (libraryId: string, version: string) => batchOf(libraryId, version, "live")?.batch ?? 0;
  const liveRows = (libraryId: string, version: string) => {
    const batch = liveBatch(libraryId, version);
    return [...tables.snippets.values()].filter((s) => s.libraryId === libraryId && s.version === version && s.batch === batch);
  };
  /** The batch, if it is still being written; ingestion_superseded otherwise (a newer ingestion retired it). */
  const requireWriting = (libraryId: string, version: string, batch: number) => {
    const b = tables.batches.get(batch);
    if (b?.libraryId !== libraryId || b.version !== version || b.state !== "writing") {
      const name = version ? `${libraryId} (version ${version})` : libraryId;
      throw new LdsError("ingestion_superseded", `Another ingestion of ${name} started after this one and replaces it; this one stopped without changing what is served.`);
    }
    return b;
  };
  return {
    count: async (libraryId, version = "", kind) => liveRows(libraryId, version).filter((s) => !kind || s.kind === kind).length,
    totals: async (libraryId) => {
      const live = batchOf(libraryId, "", "live");
      return live ? { n: live.snippets, tokens: live.tokens } : { n: 0, tokens: 0 };
    },
    countAll: async () => tables.snippets.size,
    load: async (libraryId, version, ids) => {
      const batch = liveBatch(libraryId, version);
      return ids.flatMap((id) => {
        const s = tables.snippets.get(id);
        if (!s || s.libraryId !== libraryId || s.version !== version || s.batch !== batch) return [];
        return [{ id: s.id, kind: s.kind, title: s.title, description: s.description, language: s.language, content: s.content, sourcePath: s.sourcePath, pageTitle: s.pageTitle }];
      });
    },
    pages: async function* (size) {
      const all: EmbeddableSnippet[] = [...tables.snippets.values()]
        .sort((a, b) => a.id - b.id)
        .map((s) => ({ id: s.id, libraryId: s.libraryId, version: s.version, batch: s.batch, title: s.title, description: s.description, content: s.content }));
      for (let i = 0; i < all.length; i += size) yield all.slice(i, i + size);
    },
    versions: async (libraryId) => [...new Set([...tables.snippets.values()].filter((s) => s.libraryId === libraryId).map((s) => s.version))].sort(compare),
    liveBatch: async (libraryId, version) => liveBatch(libraryId, version),
    openBatch: async (libraryId, version) => {
      // The last ingestion started wins: an unfinished batch of the same version is retired.
      const unfinished = batchOf(libraryId, version, "writing");
      if (unfinished) unfinished.state = "retired";
      const batch = nextId(tables, "batches");
      tables.batches.set(batch, { libraryId, version, batch, state: "writing", snippets: 0, tokens: 0 });
      return batch;
    },
    // Vectors are checked, not kept: this engine, like SQLite's, leaves them to the search index.
    appendToBatch: async (libraryId: string, version: string, batch: number, rows, vectors) => {
      requireVectorPerRow(rows.length, vectors);
      const b = requireWriting(libraryId, version, batch);
      const ids = rows.map((row) => {
        const id = nextId(tables, "snippets");
        tables.snippets.set(id, { ...row, id, libraryId, version, batch });
        return id;
      });
      b.snippets += rows.length;
      b.tokens += rows.reduce((sum, s) => sum + s.tokens, 0);
      return ids;
    },
    publishBatch: async (libraryId, version, batch, lease) => {
      const b = requireWriting(libraryId, version, batch);
      if (lease && !holdsLease(tables, lease)) throw leaseLost(lease.jobId);
      const previous = batchOf(libraryId, version, "live");
      if (previous) previous.state = "retired";
      b.state = "live";
    },
    discardBatch: async (libraryId, version, batch) => {
      const b = tables.batches.get(batch);
      if (b?.libraryId === libraryId && b.version === version && b.state === "writing") b.state = "retired";
    },
    retireUnfinishedAsSoleWriter: async () => {
      const writing = [...tables.batches.values()].filter((b) => b.state === "writing");
      for (const b of writing) b.state = "retired";
      return writing.length;
    },
    retireAbandonedBatches: async () => {
      const abandoned = [...tables.batches.values()].filter((b) => b.state === "writing" && !versionHeld(tables, b.libraryId, b.version));
      for (const b of abandoned) b.state = "retired";
      return abandoned.length;
    },
    retiredChunk: async (limit) => {
      for (const b of [...tables.batches.values()].filter((x) => x.state === "retired")) {
        const ids = [...tables.snippets.values()]
          .filter((s) => s.batch === b.batch)
          .map((s) => s.id)
          .slice(0, limit);
        if (ids.length) return { libraryId: b.libraryId, version: b.version, batch: b.batch, ids };
        // A retired batch with no rows left is forgotten on the way.
        tables.batches.delete(b.batch);
      }
      return undefined;
    },
    deleteRetiredRows: async (chunk) => {
      const b = tables.batches.get(chunk.batch);
      // Only while the batch is still retired: a live or writing batch's rows are never deleted here.
      if (b?.libraryId !== chunk.libraryId || b.version !== chunk.version || b.state !== "retired") return;
      for (const id of chunk.ids) if (tables.snippets.get(id)?.batch === chunk.batch) tables.snippets.delete(id);
    },
  };
}
