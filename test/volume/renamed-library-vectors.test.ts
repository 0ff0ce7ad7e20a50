import { describe, expect, it } from "vitest";
import { createHashingEmbedder } from "../../src/vectors/embedder.js";
import { partitionOf } from "../../src/index/sqlite/vector-index.js";
import { openVolume } from "../../src/volume/open-volume.js";
import { tempDir } from "../helpers/temp.js";
import { vectorsOf } from "../helpers/volume.js";
import { dbOf } from "../helpers/sqlite-db.js";

/**
 * Schema 13 renames private libraries in lds.db; their vectors (vectors.db, partitioned by library id) follow when
 * the volume is next opened, once: current content, pinned versions and batches alike, other libraries untouched.
 */
describe("the vectors of a renamed library", () => {
  it("move to the new id's partitions at the next open, and a redirect is done once", async () => {
    const root = tempDir("lds-renamed-vectors-");
    const embedder = createHashingEmbedder();
    const [a, b, c, d] = await embedder.embed(["rotate keys", "deploy release", "read rows", "unrelated text"]);
    let volume = await openVolume(root, embedder);
    const insert = dbOf(volume).prepare("INSERT INTO snippets (id, library_id, kind, title, content, version, batch) VALUES (?, ?, 'info', 't', 'c', ?, ?)");
    dbOf(volume).prepare("INSERT INTO libraries (id, title, source, private) VALUES ('/~team-2/acme/old', 'old', 'git', 1), ('/acme/other', 'other', 'git', 0)").run();
    // lds.db already renamed (as the migration leaves it), vectors.db not yet.
    insert.run(1, "/~team-2/acme/old", "", 0);
    insert.run(2, "/~team-2/acme/old", "v1", 0);
    insert.run(3, "/~team-2/acme/old", "", 4);
    insert.run(4, "/acme/other", "", 0);
    vectorsOf(volume).upsert([
      { snippetId: 1, partition: partitionOf("/team-2/acme/old"), vector: a! },
      { snippetId: 2, partition: partitionOf("/team-2/acme/old", "v1"), vector: b! },
      { snippetId: 3, partition: partitionOf("/team-2/acme/old", "", 4), vector: c! },
      { snippetId: 4, partition: partitionOf("/acme/other"), vector: d! },
    ]);
    vectorsOf(volume).markComplete();
    dbOf(volume).prepare("INSERT INTO library_redirects (old_id, new_id) VALUES ('/team-2/acme/old', '/~team-2/acme/old')").run();
    volume.close();

    volume = await openVolume(root, embedder);
    try {
      const partition = vectorsOf(volume).db.prepare("SELECT partition FROM vec_snippets WHERE snippet_id = ?").pluck();
      expect([1, 2, 3, 4].map((id) => partition.get(BigInt(id)))).toEqual(["/~team-2/acme/old", "/~team-2/acme/old v1", "/~team-2/acme/old #4", "/acme/other"]);
      expect(
        vectorsOf(volume)
          .nearest(a!, 5, partitionOf("/~team-2/acme/old"))
          .map((m) => m.snippetId),
      ).toEqual([1]);
      expect(
        vectorsOf(volume)
          .nearest(c!, 5, partitionOf("/~team-2/acme/old", "", 4))
          .map((m) => m.snippetId),
      ).toEqual([3]);
      expect(vectorsOf(volume).nearest(a!, 5, partitionOf("/team-2/acme/old"))).toEqual([]);
      expect(vectorsOf(volume).stale).toBe(false);
      expect(dbOf(volume).prepare("SELECT vectors_moved FROM library_redirects").pluck().get()).toBe(1);
    } finally {
      volume.close();
    }
  });
});
