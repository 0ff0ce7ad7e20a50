import { createHash, randomBytes } from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import Database from "better-sqlite3";
import type pg from "pg";
import { afterEach, expect, it } from "vitest";
import { dataVolume, type DataVolume } from "../../../src/config/data-volume.js";
import { databaseSettingsFromEnv } from "../../../src/config/database-settings.js";
import { postgresEngine } from "../../../src/engine/postgres/postgres-engine.js";
import { VECTORS_EMBEDDER_SETTING } from "../../../src/engine/postgres/vectors-embedder.js";
import { loadVectorExtension } from "../../../src/index/sqlite/vector-index.js";
import { runHeavy, runHeavyWorkOffThread } from "../../../src/ops/heavy-work.js";
import type { Store } from "../../../src/store/store.js";
import { createHashingEmbedder } from "../../../src/vectors/embedder.js";
import { eventually } from "../../helpers/server.js";
import { tempDir } from "../../helpers/temp.js";
import { newLibrary } from "../../store/contract/libraries.contract.js";
import { snippet } from "../../store/contract/snippets.contract.js";
import { databasePerTest } from "./database-per-test.js";

// Issue 34: a PostgreSQL backup's two files are ONE state of the database (an exported snapshot), whatever replicas
// write meanwhile, and the exporting transaction never outlives the backup.
const databases = databasePerTest();
const EMBEDDER = { id: "test-embedder-4", dimensions: 4 };
afterEach(() => runHeavyWorkOffThread(false));

async function volumeWithRecords(): Promise<{ volume: DataVolume; pool: pg.Pool; store: Store; close: () => Promise<void> }> {
  const { url, pool } = await databases.fresh();
  const keyFile = path.join(tempDir(), "secret.key");
  fs.writeFileSync(keyFile, randomBytes(32), { mode: 0o600 });
  const volume = dataVolume(tempDir(), databaseSettingsFromEnv({ LDS_DATABASE_URL: url, LDS_SECRET_KEY_FILE: keyFile }));
  const opened = await postgresEngine.open(volume, { embedder: createHashingEmbedder(), search: false });
  return { volume, pool, store: opened.store, close: async () => opened.close() };
}

/** A library published with `count` snippets, each with a vector of EMBEDDER's dimensions. */
async function publishWithVectors(store: Store, libraryId: string, count: number): Promise<number[]> {
  await store.libraries.create(newLibrary(libraryId));
  const batch = await store.snippets.openBatch(libraryId, "");
  const rows = Array.from({ length: count }, (_, i) => snippet(i));
  const ids = await store.snippets.appendToBatch(
    libraryId,
    "",
    batch,
    rows,
    rows.map((_, i) => Float32Array.from([i + 1, 0.5, -0.25, 2])),
  );
  await store.snippets.publishBatch(libraryId, "", batch);
  return ids;
}

function staging(): { dir: string; vectors: string; records: string; key: string } {
  const dir = tempDir("lds-pg-staging-");
  for (const sub of ["db", "vectors", "key"]) fs.mkdirSync(path.join(dir, sub));
  return { dir, vectors: path.join(dir, "vectors", "vectors.db"), records: path.join(dir, "db", "lds.db"), key: path.join(dir, "key", "secret.key") };
}

/** The sessions are back to `idle` (a backend goes a moment after its client closed the connection), within 5 s. */
const backTo = (pool: pg.Pool, idle: string[]) => eventually(async () => JSON.stringify(await sessions(pool)) === JSON.stringify(idle), 5_000);

/**
 * The states of this database's sessions other than the one asking (the store's pool keeps idle ones): a backup's
 * connection left open adds one, a transaction left open shows as "idle in transaction".
 */
async function sessions(pool: pg.Pool): Promise<string[]> {
  const rows = await pool.query<{ state: string | null }>("SELECT state FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid() AND backend_type = 'client backend' ORDER BY state");
  return rows.rows.map((r) => r.state ?? "");
}

it("copies the vectors and, in the server's worker thread, the records from one exported snapshot: what is written after it is in neither", async () => {
  const { volume, pool, store, close } = await volumeWithRecords();
  try {
    // The vectors' maker as the database records it (a server records its embedder at open): the copy is labelled with it.
    await store.settings.set(VECTORS_EMBEDDER_SETTING, JSON.stringify(EMBEDDER));
    const before = await publishWithVectors(store, "/acme/widgets", 5);
    const target = staging();
    const idle = await sessions(pool);
    expect(idle.every((state) => state === "idle")).toBe(true);
    let pinned!: (state?: string) => void;
    const pinnedState = new Promise<string | undefined>((resolve) => (pinned = resolve));
    let taken!: () => void;
    const recordsTaken = new Promise<void>((resolve) => (taken = resolve));
    const vectorsCopied = postgresEngine.snapshotVectors(volume, target.vectors, { yieldToRequests: true, onPinned: pinned, recordsTaken });
    const state = await pinnedState;
    expect(state).toMatch(/^[0-9A-F]+-[0-9A-F]+(-[0-9]+)?$/);

    // A replica writes on: a library published after the state was pinned.
    await publishWithVectors(store, "/acme/later", 3);
    runHeavyWorkOffThread(true);
    try {
      await runHeavy("copyRecordsAndKey", volume, target.dir, state);
    } finally {
      taken();
    }
    const copied = await vectorsCopied;
    expect(copied).toEqual({ file: target.vectors, size: fs.statSync(target.vectors).size, sha256: createHash("sha256").update(fs.readFileSync(target.vectors)).digest("hex") });

    const records = new Database(target.records, { readonly: true });
    try {
      expect(records.prepare("SELECT id FROM libraries ORDER BY id").pluck().all()).toEqual(["/acme/widgets"]);
      expect(records.prepare("SELECT id FROM snippets ORDER BY id").pluck().all()).toEqual(before);
    } finally {
      records.close();
    }
    const vectors = new Database(target.vectors, { readonly: true });
    try {
      loadVectorExtension(vectors);
      expect(vectors.prepare("SELECT snippet_id FROM vec_snippets ORDER BY snippet_id").pluck().all()).toEqual(before);
      const meta = Object.fromEntries((vectors.prepare("SELECT key, value FROM vector_meta").all() as Array<{ key: string; value: string }>).map((r) => [r.key, r.value]));
      expect(meta).toMatchObject({ layout: "2", complete: "1", embedder: EMBEDDER.id, dimensions: "4" });
      expect(vectors.pragma("journal_mode", { simple: true })).toBe("delete");
    } finally {
      vectors.close();
    }
    expect(fs.readFileSync(target.key)).toEqual(fs.readFileSync(volume.engine.name === "postgres" ? volume.engine.keyFile : ""));
    expect(fs.statSync(target.key).mode & 0o777).toBe(0o600);
    // Every connection of the backup ended: nothing idle in a transaction, nothing left at all.
    await backTo(pool, idle);
  } finally {
    await close();
  }
}, 60_000);

it("ends the exporting transaction once the records say so, and an importer that comes after it fails leaving no file", async () => {
  const { volume, pool, store, close } = await volumeWithRecords();
  try {
    await publishWithVectors(store, "/acme/widgets", 2);
    const target = staging();
    const idle = await sessions(pool);
    let state: string | undefined;
    // Told at once that the records have taken it: the transaction ends as soon as the vectors are copied.
    await postgresEngine.snapshotVectors(volume, target.vectors, { yieldToRequests: false, onPinned: (s) => (state = s), recordsTaken: Promise.resolve() });
    await backTo(pool, idle);
    await expect(postgresEngine.snapshotRecords(volume, { records: target.records, key: target.key }, state)).rejects.toThrow(/snapshot/);
    expect(fs.existsSync(target.records)).toBe(false);
    expect(fs.existsSync(target.key)).toBe(false);
    await backTo(pool, idle);
  } finally {
    await close();
  }
}, 60_000);
