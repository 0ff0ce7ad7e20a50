import path from "node:path";
import { afterAll, beforeAll, expect, it } from "vitest";
import { openPostgresStore } from "../../../src/store/postgres/postgres-store.js";
import type { Store } from "../../../src/store/store.js";
import { openVolume } from "../../../src/volume/open-volume.js";
import { copyRowsToPostgres } from "../../helpers/copy-rows.js";
import { startPostgres, type PostgresTestServer } from "../../helpers/postgres-server.js";
import { tempDir } from "../../helpers/temp.js";
import { LEASE_MS, OWNER } from "../contract/harness.js";
import { newLibrary } from "../contract/libraries.contract.js";
import { publish, snippet } from "../contract/snippets.contract.js";

// The records lds.db holds mean the same in PostgreSQL once copied column for column (the schema's promise, which a
// cross-restore relies on): timestamps, JSON columns, 0/1 flags, sealed secrets and batch totals read alike.

let server: PostgresTestServer;
beforeAll(async () => {
  server = await startPostgres();
});
afterAll(async () => server?.stop());

/** What a set of reads answers on one engine. */
async function reads(store: Store, libraryId: string, snippetIds: number[], jobId: number) {
  return {
    library: await store.libraries.find(libraryId),
    list: await store.libraries.list(),
    options: await store.libraries.options(libraryId),
    versions: await store.versions.list(libraryId),
    newest: await store.versions.names(libraryId, "newest"),
    commit: await store.versions.commit(libraryId, "v1"),
    count: await store.snippets.count(libraryId),
    pinned: await store.snippets.count(libraryId, "v1"),
    totals: await store.snippets.totals(libraryId),
    live: await store.snippets.liveBatch(libraryId, ""),
    loaded: await store.snippets.load(libraryId, "", snippetIds),
    snippetVersions: await store.snippets.versions(libraryId),
    token: await store.jobs.token(jobId),
    pending: await store.jobs.hasPending(libraryId, "v2"),
    setting: await store.settings.get("s3"),
    secret: await store.settings.secret("s3:secret"),
    usage: await store.usage.read(libraryId, "2026-01-01"),
    audit: await store.audit.list(),
  };
}

it("reads libraries, versions, snippet batches, jobs with tokens, settings with secrets, usage and audit made by the SQLite engine, rows copied column for column", async () => {
  const root = tempDir("lds-pg-records-");
  const volume = await openVolume(root);
  const sqlite = volume.store;
  const lib = "/acme/widgets";
  await sqlite.libraries.createWithJob(newLibrary(lib, { description: "Widgets" }), { branch: "main", generateDocs: true }, { url: "https://git.example.test/acme/widgets" }, "tok-1");
  await sqlite.libraries.create(newLibrary("/~team-1/old", { private: true }));
  await sqlite.libraries.recordServedBranch(lib, { name: "main", commit: "c1", fetchedAt: "2026-11-01T00:00:00.000Z" });
  await sqlite.libraries.setState(lib, "finalized");
  await sqlite.versions.record(lib, { name: "v1", ref: "refs/tags/v1", commit: "c-v1" });
  await sqlite.versions.record(lib, { name: "v2", ref: "refs/tags/v2", commit: "c-v2" });
  const old = await publish(sqlite, lib, "", [snippet(1), snippet(2)]);
  const current = await publish(sqlite, lib, "", [snippet(3), snippet(4), snippet(5)]);
  await publish(sqlite, lib, "v1", [snippet(6)]);
  const pendingJob = await sqlite.jobs.enqueue({ libraryId: lib, kind: "ingest", payload: { version: "v2", branch: "v2" } }, "tok-2");
  await sqlite.settings.saveWithSecrets("s3", '{"bucket":"b"}', [{ name: "s3:secret", value: "shh" }]);
  await sqlite.usage.add([{ libraryId: lib, day: "2026-11-01", dimension: "client", name: "api", count: 3 }]);
  await sqlite.audit.record({ actor: "admin", action: "library.move", subject: lib, details: { to: "x" } });
  const expected = await reads(sqlite, lib, [...current.ids, ...old.ids], pendingJob);
  volume.close();
  expect(expected.count).toBe(3);
  expect(expected.token).toBe("tok-2");

  const database = await server.newDatabase();
  await (await openPostgresStore({ settings: { url: database.url } }, volume.key)).close();
  const tables = ["libraries", "library_versions", "snippets", "snippet_batches", "jobs", "settings", "secrets", "library_usage", "audit_log"];
  await copyRowsToPostgres(path.join(root, "lds.db"), database.url, tables);
  const opened = await openPostgresStore({ settings: { url: database.url } }, volume.key);
  try {
    expect(await reads(opened.store, lib, [...current.ids, ...old.ids], pendingJob)).toEqual(expected);
    // The retired batch's rows are purged from PostgreSQL as they would have been from lds.db.
    const chunk = (await opened.store.snippets.retiredChunk(10))!;
    expect(chunk).toEqual({ libraryId: lib, version: "", batch: old.batch, ids: [...old.ids].sort((a, b) => a - b) });
    expect((await opened.store.jobs.claimNext(OWNER, LEASE_MS))!.id).toBeLessThan(pendingJob);
  } finally {
    await opened.close();
    await database.drop();
  }
});
