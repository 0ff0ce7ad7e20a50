import { randomBytes } from "node:crypto";
import type pg from "pg";
import { afterAll, afterEach, beforeAll, beforeEach } from "vitest";
import { startSearchReplica, type SearchReplica } from "../../../src/engine/postgres/search-replica.js";
import type { IndexBatch } from "../../../src/index/search-index.js";
import { openPool } from "../../../src/store/postgres/pool.js";
import { openPostgresStore, type PostgresStore } from "../../../src/store/postgres/postgres-store.js";
import type { NewSnippet } from "../../../src/store/records.js";
import type { Store } from "../../../src/store/store.js";
import { createHashingEmbedder } from "../../../src/vectors/embedder.js";
import { startPostgres, type PostgresTestServer, type TestDatabase } from "../../helpers/postgres-server.js";
import { tempDir } from "../../helpers/temp.js";

/**
 * Replicas' search files followed from PostgreSQL, for the tests of engine/postgres/search-replica.ts: a real cluster
 * for the file, a new database and records store per test, replicas on real files in temporary data directories.
 * The poll is an hour away unless a test says otherwise, so that what a test waits for is the notice's doing.
 */
export const embedder = createHashingEmbedder();
export const HOUR = 3_600_000;

export interface ReplicaWorld {
  readonly server: PostgresTestServer;
  readonly database: TestDatabase;
  readonly records: PostgresStore;
  replica(dataDir?: string, pollMs?: number, more?: { ensureTimeoutMs?: number; onError?: (err: unknown) => void }): Promise<SearchReplica>;
  /** A replica the test closed itself: not closed again. */
  closed(replica: SearchReplica): void;
}

export function replicaWorld(): ReplicaWorld {
  let server: PostgresTestServer;
  let database: TestDatabase;
  let records: PostgresStore;
  let pools: pg.Pool[] = [];
  let replicas: SearchReplica[] = [];
  beforeAll(async () => {
    server = await startPostgres();
  });
  afterAll(async () => server?.stop());
  beforeEach(async () => {
    database = await server.newDatabase();
    records = await openPostgresStore({ settings: { url: database.url } }, randomBytes(32));
  });
  afterEach(async () => {
    await Promise.all(replicas.map((r) => r.close()));
    await Promise.all(pools.map((p) => p.end()));
    replicas = [];
    pools = [];
    await records?.close();
    await database?.drop();
  });
  return {
    get server() {
      return server;
    },
    get database() {
      return database;
    },
    get records() {
      return records;
    },
    async replica(dataDir = tempDir(), pollMs = HOUR, more = {}) {
      const pool = openPool({ url: database.url, max: 3 });
      pools.push(pool);
      const started = await startSearchReplica({ pool, url: database.url, dataDir, embedder, pollMs, ...more });
      replicas.push(started);
      return started;
    },
    closed(replica) {
      replicas = replicas.filter((r) => r !== replica);
    },
  };
}

const TOPICS = ["cache", "router", "config", "plugin", "stream", "parser", "logger", "queue"];

/** `count` snippets of a library whose words overlap (so that rankings have ties to break and orders to keep). */
export function rows(library: string, count: number, seed = 0): NewSnippet[] {
  return Array.from({ length: count }, (_, i) => {
    const topic = TOPICS[(i * 3 + seed) % TOPICS.length]!;
    const other = TOPICS[(i + seed) % TOPICS.length]!;
    return {
      kind: i % 2 ? "code" : "info",
      title: `${topic} ${i}`,
      description: `How the ${topic} works with the ${other}`,
      language: i % 2 ? "ts" : null,
      content: `${library} ${topic} ${topic} ${other} example ${i} ${"word ".repeat(i % 5)}`,
      sourcePath: `docs/${topic}.md#${i}`,
      tokens: 10 + i,
      pageTitle: null,
    };
  });
}

/** The text a snippet's vector is made of, here. */
export const embeddedText = (s: NewSnippet) => `${s.title}\n${s.content}`;

/** Publish `snippets` as a new batch through a store, rows and vectors in chunks as an ingestion writes them. */
export async function publish(store: Store, libraryId: string, version: string, snippets: NewSnippet[]): Promise<{ batch: IndexBatch; ids: number[] }> {
  const batch = await store.snippets.openBatch(libraryId, version);
  const ids: number[] = [];
  for (let i = 0; i < snippets.length; i += 40) {
    const chunk = snippets.slice(i, i + 40);
    ids.push(...(await store.snippets.appendToBatch(libraryId, version, batch, chunk, await embedder.embed(chunk.map(embeddedText)))));
  }
  await store.snippets.publishBatch(libraryId, version, batch);
  return { batch: { libraryId, version, batch }, ids };
}

/** The ids a replica's words ranking answers for a batch: the condition tests wait for (the batch is held). */
export const ranked = async (r: SearchReplica, batch: IndexBatch, words = ["cache"]) => (await r.index.rank(batch, words, 100)).map((hit) => hit.id);
