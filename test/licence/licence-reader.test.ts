import fs from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { licenceReader } from "../../src/licence/licence.js";
import { tempDir } from "../helpers/temp.js";

describe("the licence reader of the public API", () => {
  it("parses license.json once, and again only when the file changes", () => {
    const dir = tempDir();
    const file = path.join(dir, "license.json");
    const read = licenceReader(dir, undefined);
    expect(read().state).toBe("community");

    // Whole seconds, so that the same time can be set again exactly.
    const pinned = Math.floor(Date.now() / 1000) - 60;
    fs.writeFileSync(file, JSON.stringify({ licensee: "Acme", expiresAt: "2020-01-01T00:00:00Z" }));
    fs.utimesSync(file, pinned, pinned);
    expect(read().state).toBe("expired");

    // Same inode, size and modification time: the cached licence is served without reading the file.
    fs.writeFileSync(file, JSON.stringify({ licensee: "Acme", expiresAt: "2099-01-01T00:00:00Z" }));
    fs.utimesSync(file, pinned, pinned);
    expect(read().state).toBe("expired");

    // A renewal (new modification time) applies at the next request.
    fs.utimesSync(file, pinned + 5, pinned + 5);
    expect(read()).toMatchObject({ state: "valid", expiresAt: "2099-01-01T00:00:00.000Z" });
    fs.rmSync(file);
    expect(read().state).toBe("community");
  });
});
