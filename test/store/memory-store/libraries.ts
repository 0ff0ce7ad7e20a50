import { libraryBusy, libraryIdTaken } from "../../../src/store/record-values.js";
import type { Library, LibraryState, NewLibrary } from "../../../src/store/records.js";
import type { LibraryStore, VersionStore } from "../../../src/store/store.js";
import { recordAudit } from "./usage-audit.js";
import { enqueue, hasAnyPending, tokenName } from "./jobs.js";
import { compare } from "./accounts.js";
import { copy, now, type MemoryTables } from "./tables.js";

/** As a JSON column keeps it: fields set to undefined are not kept. */
const asStored = <T>(value: T): T => JSON.parse(JSON.stringify(value)) as T;

export function libraryStore(tables: MemoryTables): LibraryStore {
  const insert = (lib: NewLibrary) => {
    if (tables.libraries.has(lib.id)) throw libraryIdTaken(lib.id);
    tables.libraries.set(lib.id, {
      id: lib.id,
      teamId: lib.teamId,
      title: lib.title,
      description: lib.description ?? "",
      private: lib.private,
      source: lib.source,
      sourceUrl: lib.sourceUrl,
      sourceKey: lib.sourceKey,
      branches: [],
      ownerUserId: lib.ownerUserId,
      state: "queued",
      stateReason: null,
      updatedAt: now(),
    });
  };
  const update = (id: string, change: Partial<Library>) => {
    const lib = tables.libraries.get(id);
    if (lib) Object.assign(lib, change);
  };
  const setState = (id: string, state: LibraryState, reason: string | null = null) => update(id, { state, stateReason: reason, updatedAt: now() });
  const sorted = (libs: Library[]) => libs.sort((a, b) => compare(a.id, b.id)).map(copy);
  return {
    find: async (id) => copy(tables.libraries.get(id)),
    list: async () => sorted([...tables.libraries.values()]),
    bySource: async (sourceKey) => sorted([...tables.libraries.values()].filter((l) => l.sourceKey === sourceKey)),
    redirect: async (oldId) => tables.redirects.get(oldId),
    create: async (library) => insert(library),
    createWithJob: async (library, options, payload, token) => {
      insert(library);
      if (options) tables.options.set(library.id, asStored(options));
      enqueue(tables, { libraryId: library.id, kind: "ingest", payload: asStored(payload) }, token);
    },
    queueJob: async (libraryId, job, token, markQueued) => {
      enqueue(tables, { libraryId, kind: job.kind, payload: asStored(job.payload) }, token);
      if (markQueued) setState(libraryId, "queued");
    },
    relocate: async (move) => {
      update(move.libraryId, { sourceUrl: move.sourceUrl, sourceKey: move.sourceKey, branches: [] });
      const options = asStored({ ...tables.options.get(move.libraryId), branch: move.branch });
      tables.options.set(move.libraryId, options);
      enqueue(tables, { libraryId: move.libraryId, kind: "refresh", payload: asStored({ url: move.sourceUrl, ...options, teamId: move.teamId ?? undefined }) });
      setState(move.libraryId, "queued");
      recordAudit(tables, { actor: move.actor, action: "library.move", subject: move.libraryId, details: { from: move.from, to: move.sourceUrl, branch: move.branch ?? null } });
    },
    options: async (id) => copy(tables.options.get(id) ?? {}),
    servedBranches: async (id) => copy(tables.libraries.get(id)?.branches ?? []),
    // A library serves one branch: its record replaces any other.
    recordServedBranch: async (id, record) => update(id, { branches: [copy(record)] }),
    setDescription: async (id, description) => update(id, { description }),
    setState: async (id, state, reason) => setState(id, state, reason ?? null),
    remove: async (id) => {
      // Checked before anything goes: a job of the library would write into a library that is gone.
      if (hasAnyPending(tables, id)) throw libraryBusy(id);
      const snippetIds = [...tables.snippets.values()].filter((s) => s.libraryId === id).map((s) => s.id);
      for (const snippetId of snippetIds) tables.snippets.delete(snippetId);
      for (const [batch, b] of tables.batches) if (b.libraryId === id) tables.batches.delete(batch);
      for (const [jobId, j] of tables.jobs) {
        if (j.job.libraryId !== id) continue;
        tables.jobs.delete(jobId);
        tables.secrets.delete(tokenName(jobId));
      }
      for (const [key, u] of tables.usage) if (u.libraryId === id) tables.usage.delete(key);
      tables.versions.delete(id);
      tables.options.delete(id);
      tables.libraries.delete(id);
      return snippetIds;
    },
  };
}

export function versionStore(tables: MemoryTables): VersionStore {
  const of = (libraryId: string) => [...(tables.versions.get(libraryId)?.values() ?? [])];
  return {
    list: async (libraryId) =>
      of(libraryId)
        .sort((a, b) => compare(a.name, b.name))
        .map(({ name, ref }) => ({ name, ref })),
    names: async (libraryId, order = "name") =>
      of(libraryId)
        .sort((a, b) => (order === "name" ? compare(a.name, b.name) : b.tick - a.tick))
        .map((v) => v.name),
    commit: async (libraryId, name) => tables.versions.get(libraryId)?.get(name)?.commit,
    record: async (libraryId, version) => {
      let versions = tables.versions.get(libraryId);
      if (!versions) tables.versions.set(libraryId, (versions = new Map()));
      versions.set(version.name, { name: version.name, ref: version.ref, commit: version.commit, tick: ++tables.ticks });
    },
  };
}
