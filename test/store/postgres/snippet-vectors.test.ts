import { randomBytes } from "node:crypto";
import pg from "pg";
import { afterAll, beforeAll, expect, it } from "vitest";
import { openPostgresStore, type PostgresStore } from "../../../src/store/postgres/postgres-store.js";
import { bytesToVector, vectorToBytes } from "../../../src/store/postgres/vector-bytes.js";
import { startPostgres, type PostgresTestServer, type TestDatabase } from "../../helpers/postgres-server.js";
import { newLibrary } from "../contract/libraries.contract.js";
import { snippet } from "../contract/snippets.contract.js";

// What the PostgreSQL engine keeps for the replicas' search files: vectors beside the rows, notices of publication.
let server: PostgresTestServer;
let database: TestDatabase;
let opened: PostgresStore;
let client: pg.Client;
beforeAll(async () => {
  server = await startPostgres();
  database = await server.newDatabase();
  opened = await openPostgresStore({ settings: { url: database.url } }, randomBytes(32));
  client = new pg.Client({ connectionString: database.url });
  await client.connect();
});
afterAll(async () => {
  await client?.end();
  await opened?.close();
  await server?.stop();
});

/** Values whose bits a float conversion would lose or change: signed zero, denormals, extremes, NaN payloads. */
function awkwardVector(): Float32Array {
  const bits = new Uint32Array([0x80000000, 0x00000001, 0x007fffff, 0x7f7fffff, 0xff800000, 0x7fc00001, 0xffc12345, 0x3eaaaaab]);
  const vector = new Float32Array(bits.buffer.slice(0));
  return Float32Array.from([...vector, ...Array.from({ length: 376 }, (_, i) => Math.fround(Math.sin(i) / 7))]);
}
const bitsOf = (vector: Float32Array) => Buffer.from(vector.buffer, vector.byteOffset, vector.byteLength).toString("hex");

it("vectors round-trip bit-exact through bytea: stored with their rows, in the rows' order, read back the same", async () => {
  const { store } = opened;
  await store.libraries.create(newLibrary("/acme/bits"));
  const batch = await store.snippets.openBatch("/acme/bits", "");
  const vectors = [awkwardVector(), Float32Array.from({ length: 384 }, (_, i) => -i / 3)];
  const ids = await store.snippets.appendToBatch("/acme/bits", "", batch, [snippet(1), snippet(2)], vectors);
  const { rows } = await client.query<{ id: string; vector: Buffer }>("SELECT snippet_id AS id, vector FROM snippet_vectors WHERE snippet_id = ANY($1::bigint[]) ORDER BY snippet_id", [ids]);
  expect(rows.map((r) => Number(r.id))).toEqual(ids);
  expect(rows.map((r) => r.vector.length)).toEqual([384 * 4, 384 * 4]);
  expect(rows.map((r) => bitsOf(bytesToVector(r.vector)))).toEqual(vectors.map(bitsOf));
  // The stored bytes are float32 little-endian whatever the machine: the first value is -0 (0x80000000).
  expect(rows[0]!.vector.subarray(0, 4).toString("hex")).toBe("00000080");
  expect(bitsOf(bytesToVector(vectorToBytes(vectors[0]!.subarray(8))))).toBe(bitsOf(vectors[0]!.subarray(8)));
});

it("rows appended without vectors have none; a failed append leaves neither rows nor vectors", async () => {
  const { store } = opened;
  await store.libraries.create(newLibrary("/acme/none"));
  const batch = await store.snippets.openBatch("/acme/none", "");
  const ids = await store.snippets.appendToBatch("/acme/none", "", batch, [snippet(3)]);
  expect((await client.query("SELECT 1 FROM snippet_vectors WHERE snippet_id = $1", [ids[0]])).rowCount).toBe(0);
  const before = Number((await client.query<{ n: string }>("SELECT count(*) AS n FROM snippet_vectors")).rows[0]!.n);
  await store.snippets.openBatch("/acme/none", ""); // supersedes `batch`
  await expect(store.snippets.appendToBatch("/acme/none", "", batch, [snippet(4)], [new Float32Array(4)])).rejects.toMatchObject({ code: "ingestion_superseded" });
  expect(Number((await client.query<{ n: string }>("SELECT count(*) AS n FROM snippet_vectors")).rows[0]!.n)).toBe(before);
});

it("publishing and removing are announced on lds_batches at commit, and only then", async () => {
  const { store } = opened;
  const listener = new pg.Client({ connectionString: database.url });
  await listener.connect();
  const notices: unknown[] = [];
  listener.on("notification", (n) => notices.push(JSON.parse(n.payload!)));
  await listener.query("LISTEN lds_batches");
  try {
    await store.libraries.create(newLibrary("/acme/told"));
    const batch = await store.snippets.openBatch("/acme/told", "v1");
    await store.snippets.appendToBatch("/acme/told", "v1", batch, [snippet(5)], [new Float32Array(4)]);
    await store.snippets.publishBatch("/acme/told", "v1", batch);
    // A publication refused (already published) is rolled back: nothing is announced for it.
    await expect(store.snippets.publishBatch("/acme/told", "v1", batch)).rejects.toMatchObject({ code: "ingestion_superseded" });
    await store.libraries.remove("/acme/told");
    await expect.poll(() => notices.length).toBe(2);
    expect(notices).toEqual([
      { library: "/acme/told", version: "v1", batch, event: "published" },
      { library: "/acme/told", event: "removed" },
    ]);
  } finally {
    await listener.end();
  }
});
