import { randomBytes } from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { databaseSettingsFromEnv } from "../../src/config/database-settings.js";
import { LdsError } from "../../src/errors.js";
import { keyFingerprint } from "../../src/secrets/key-file.js";
import { openRecords, openVolume } from "../../src/volume/open-volume.js";
import { startPostgres, type PostgresTestServer } from "../helpers/postgres-server.js";
import { tempDir } from "../helpers/temp.js";
import { rankSnippets } from "../../src/search/rank-snippets.js";
import type { LibraryRef } from "../../src/search/library-ref.js";
import { newLibrary } from "../store/contract/libraries.contract.js";
import { embeddedText, embedder, rows } from "./postgres/replica-fixtures.js";

let server: PostgresTestServer;
beforeAll(async () => {
  server = await startPostgres();
});
afterAll(async () => server?.stop());

/** A replica's settings: the database, and a key file of its own (mode 0600) holding `key`. */
function replicaOf(url: string, key: Buffer) {
  const dir = tempDir();
  const keyFile = path.join(dir, "secret.key");
  fs.writeFileSync(keyFile, key, { mode: 0o600 });
  return { root: path.join(dir, "data"), settings: databaseSettingsFromEnv({ LDS_DATABASE_URL: url, LDS_SECRET_KEY_FILE: keyFile }), keyFile };
}

describe("opening the records in PostgreSQL with the shared key", () => {
  it("of two replicas opening an empty database at once with different keys, exactly one wins; the other gets key_missing", async () => {
    for (let round = 0; round < 4; round++) {
      const database = await server.newDatabase();
      try {
        const keys = [randomBytes(32), randomBytes(32)];
        const replicas = keys.map((key) => replicaOf(database.url, key));
        const outcomes = await Promise.allSettled(replicas.map((r) => openRecords(r.root, r.settings)));
        const won = outcomes.flatMap((o, i) => (o.status === "fulfilled" ? [i] : []));
        expect(won).toHaveLength(1);
        const lost = outcomes.find((o) => o.status === "rejected")!.reason as LdsError;
        expect(lost).toBeInstanceOf(LdsError);
        expect(lost.code).toBe("key_missing");
        expect(lost.message).toBe(`${replicas[1 - won[0]!]!.keyFile} is not the key the database at 127.0.0.1:${server.port} was sealed with.`);
        const winner = (outcomes[won[0]!] as PromiseFulfilledResult<Awaited<ReturnType<typeof openRecords>>>).value;
        try {
          expect(await winner.store.settings.get("secret_key.fingerprint")).toBe(keyFingerprint(keys[won[0]!]!));
          expect(winner.key.equals(keys[won[0]!]!)).toBe(true);
        } finally {
          await winner.close();
        }
        // The winner's key opens it again from another data directory; the loser's still does not.
        const again = replicaOf(database.url, keys[won[0]!]!);
        const reopened = await openRecords(again.root, again.settings);
        await reopened.close();
        const loser = replicaOf(database.url, keys[1 - won[0]!]!);
        await expect(openRecords(loser.root, loser.settings)).rejects.toMatchObject({ code: "key_missing" });
      } finally {
        await database.drop();
      }
    }
  });

  it("opens the search files only for the server: records alone start no follower; the volume's index is the replica's, which waits for a live batch", async () => {
    const database = await server.newDatabase();
    try {
      const replica = replicaOf(database.url, randomBytes(32));
      const records = await openRecords(replica.root, replica.settings);
      await records.close();
      // A command beside a serving replica must not write the replica's search files.
      expect(fs.existsSync(path.join(replica.root, "search"))).toBe(false);
      const volume = await openVolume(replica.root, undefined, { engine: replica.settings, command: "lds serve" });
      try {
        expect(fs.existsSync(path.join(replica.root, "search", "lds.db"))).toBe(true);
        expect(volume.searchLag?.()).toMatchObject({ batches: 0, oldestMs: null, caughtUp: true });
        expect(typeof volume.index.ready).toBe("function");
        // A batch that is not live (nothing was published) answers at once: there is nothing to fetch.
        await volume.index.ready!({ libraryId: "/acme/none", version: "", batch: 1 });
        // A batch made live by SQL of its own (no notice; the poll 5 s away): the files do not hold it, yet the
        // request path ranks it at once, because it waits for the live batch the records name (SearchIndex.ready).
        await volume.store.libraries.create(newLibrary("/acme/widgets"));
        const batch = await volume.store.snippets.openBatch("/acme/widgets", "");
        const snippets = rows("/acme/widgets", 12);
        await volume.store.snippets.appendToBatch("/acme/widgets", "", batch, snippets, await embedder.embed(snippets.map(embeddedText)));
        await server.asSuperuser(database.name, (client) => client.query("UPDATE snippet_batches SET state = 'live' WHERE batch = $1", [batch]));
        const ref: LibraryRef = { libraryId: "/acme/widgets", version: "" };
        const ids = await rankSnippets(volume, ref, "cache router");
        expect(ids.length).toBeGreaterThan(0);
      } finally {
        await volume.close();
      }
    } finally {
      await database.drop();
    }
  });

  it("hands TLS to the driver: a CA file, or sslmode in the URL, makes it ask the server for TLS (the test server has none)", async () => {
    const database = await server.newDatabase();
    try {
      const key = randomBytes(32);
      const plain = replicaOf(database.url, key);
      await (await openRecords(plain.root, plain.settings)).close();
      const caFile = path.join(tempDir(), "ca.pem");
      fs.writeFileSync(caFile, "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n");
      for (const env of [{ LDS_DATABASE_CA_FILE: caFile }, { LDS_DATABASE_URL: `${database.url}?sslmode=verify-full` }]) {
        const settings = databaseSettingsFromEnv({ LDS_DATABASE_URL: database.url, LDS_SECRET_KEY_FILE: plain.keyFile, ...env });
        await expect(openRecords(plain.root, settings)).rejects.toThrow(/does not support SSL/);
      }
    } finally {
      await database.drop();
    }
  });
});
