import { describe, expect, it } from "vitest";
import { canaryTitles } from "../../../src/engine/sqlite/manifest-view.js";
import { openVolume } from "../../../src/volume/open-volume.js";
import { tempDir } from "../../helpers/temp.js";
import { dbOf } from "../../helpers/sqlite-db.js";

describe("the canary queries of a backup", () => {
  it("takes titles spread over each library's served snippets, skipping titles too short to search for", async () => {
    const volume = await openVolume(tempDir());
    try {
      const db = dbOf(volume);
      db.prepare("INSERT INTO teams (name, plan) VALUES ('t', 'pro')").run();
      db.prepare("INSERT INTO libraries (id, team_id, title, source, state) VALUES ('/acme/docs', 1, 'docs', 'git', 'finalized')").run();
      const add = db.prepare("INSERT INTO snippets (library_id, kind, title, content, version) VALUES ('/acme/docs', 'info', ?, 'text', ?)");
      const titles = ["first", "second", "third", "ab", "fifth", "sixth", "x", "y", "ninth", "tenth"];
      for (const title of titles) add.run(title, "");
      // Another version's snippets are not the current content.
      add.run("pinned version", "v1");
      // Ten snippets, three wanted: blocks of three from snippets 0, 3 and 6; the first title of 3 letters or more in each.
      expect(canaryTitles(db, 3, 20)).toEqual([{ libraryId: "/acme/docs", titles: ["first", "fifth", "ninth"] }]);
    } finally {
      volume.close();
    }
  });
});
