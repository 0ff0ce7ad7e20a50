import fs from "node:fs";
import path from "node:path";
import { expect, it } from "vitest";
import { LATEST_SCHEMA_VERSION } from "../../../src/engine/sqlite/migrations.js";
import { createRecordsFile } from "../../../src/engine/sqlite/records-file-writer.js";
import { tempDir } from "../../helpers/temp.js";

// A records file holds sealed secrets and digests of keys and sessions: other local users never read it, not even
// while it is being filled; and a path that exists is never written over.

it("is readable by its owner only from the moment it exists, and an aborted one is gone", () => {
  const file = path.join(tempDir(), "lds.db");
  const previous = process.umask(0o022);
  try {
    const writer = createRecordsFile(file, LATEST_SCHEMA_VERSION);
    expect((fs.statSync(file).mode & 0o777).toString(8)).toBe("600");
    writer.abort();
    expect(fs.existsSync(file)).toBe(false);
  } finally {
    process.umask(previous);
  }
});

it("refuses a path that exists, leaving it as it was", () => {
  const file = path.join(tempDir(), "lds.db");
  fs.writeFileSync(file, "someone else's file");
  expect(() => createRecordsFile(file, LATEST_SCHEMA_VERSION)).toThrow(/already exists/);
  expect(fs.readFileSync(file, "utf8")).toBe("someone else's file");
});
