import path from "node:path";
import Database from "better-sqlite3";
import { describe, expect, it } from "vitest";
import { dataVolume } from "../../src/config/data-volume.js";
import { openVolume } from "../../src/volume/open-volume.js";
import { registerVolumeUser } from "../../src/locks/volume-users.js";
import { partitionOf } from "../../src/index/sqlite/vector-index.js";
import { eventually, startServer } from "../helpers/server.js";
import { tempDir } from "../helpers/temp.js";
import { vectorsOf, seedVolume } from "../helpers/volume.js";

const row = (title: string) => ({ kind: "info" as const, title, description: "", language: null, content: `${title} text`, sourcePath: "a.md", tokens: 2, pageTitle: null });

/** A volume whose /acme/widgets serves 3 snippets, with a batch a crash left half written and a replaced batch not yet deleted. */
async function volumeWithLeftovers(): Promise<string> {
  const dataDir = tempDir();
  await seedVolume(dataDir, { libraries: [{ id: "/acme/widgets" }] });
  const volume = await openVolume(dataDir);
  try {
    const { snippets } = volume.store;
    const addWithVectors = async (batch: number, titles: string[]) => {
      const embedded = await volume.embedder.embed(titles);
      const ids = await snippets.appendToBatch("/acme/widgets", "", batch, titles.map(row));
      vectorsOf(volume).upsert(ids.map((snippetId, i) => ({ snippetId, partition: partitionOf("/acme/widgets", "", batch), vector: embedded[i]! })));
    };
    const replaced = await snippets.openBatch("/acme/widgets", "");
    await addWithVectors(replaced, ["replaced one", "replaced two"]);
    await snippets.discardBatch("/acme/widgets", "", replaced);
    const crashed = await snippets.openBatch("/acme/widgets", "");
    await addWithVectors(crashed, ["crashed one"]);
  } finally {
    volume.close();
  }
  return dataDir;
}

function leftovers(dataDir: string) {
  const db = new Database(path.join(dataDir, "lds.db"), { readonly: true });
  try {
    return {
      rows: db.prepare("SELECT count(*) FROM snippets").pluck().get() as number,
      batches: db.prepare("SELECT state FROM snippet_batches ORDER BY batch").pluck().all() as string[],
    };
  } finally {
    db.close();
  }
}

describe("snippet batches left behind, at the server's start (schema 11)", () => {
  it("retires a batch no process is writing and deletes it with the replaced one, while serving", async () => {
    const dataDir = await volumeWithLeftovers();
    expect(leftovers(dataDir)).toEqual({ rows: 6, batches: ["retired", "writing"] });
    const server = await startServer(dataDir);
    try {
      // The rows go first, then the batch's record (when the next look finds none of its rows left).
      await eventually(async () => leftovers(dataDir).batches.length === 0);
      expect(leftovers(dataDir)).toEqual({ rows: 3, batches: [] });
      const health = await (await fetch(`${server.url}/api/health`)).json();
      expect(health.status).toBe("ok");
    } finally {
      await server.stop();
    }
    const volume = await openVolume(dataDir);
    try {
      expect(await volume.store.snippets.count("/acme/widgets")).toBe(3);
      expect(vectorsOf(volume).count()).toBe(3);
    } finally {
      volume.close();
    }
  });

  it("keeps an unfinished batch while another command has the volume open (it may be the one writing it)", async () => {
    const dataDir = await volumeWithLeftovers();
    const user = registerVolumeUser(dataVolume(dataDir), "ingest git");
    const server = await startServer(dataDir);
    try {
      await eventually(async () => !leftovers(dataDir).batches.includes("retired"));
      expect(leftovers(dataDir)).toEqual({ rows: 4, batches: ["writing"] });
    } finally {
      await server.stop();
      user.release();
    }
  });
});
