import fs from "node:fs";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { isLdsError } from "../../src/errors.js";
import { runHeavy, runHeavyWorkOffThread } from "../../src/ops/heavy-work.js";
import { dataVolume } from "../../src/config/data-volume.js";
import { tempDir } from "../helpers/temp.js";
import { seedVolume } from "../helpers/volume.js";

afterEach(() => runHeavyWorkOffThread(false));

describe("heavy SQLite work in a worker thread", () => {
  it("returns the result of a snapshot taken in the worker", async () => {
    const dataDir = tempDir();
    await seedVolume(dataDir);
    runHeavyWorkOffThread(true);
    const staging = tempDir();
    const snapshot = await runHeavy("snapshotVolume", dataVolume(dataDir), staging);
    expect(snapshot.libraries.map((l) => l.id)).toEqual(["/acme/gadgets", "/acme/widgets"]);
    expect(fs.statSync(path.join(staging, "db/lds.db")).size).toBeGreaterThan(0);
  });

  it("rebuilds an LdsError thrown in the worker with its code and hint", async () => {
    const dir = tempDir();
    fs.mkdirSync(path.join(dir, "key"), { recursive: true });
    fs.writeFileSync(path.join(dir, "key/secret.key"), Buffer.alloc(16));
    runHeavyWorkOffThread(true);
    const error = await runHeavy("checkExtractedSnapshot", dir, { schemaVersion: 1 } as never).catch((e) => e);
    expect(isLdsError(error, "archive_corrupt")).toBe(true);
    expect(error.message).toContain("key/secret.key is 16 bytes");
    expect(error.hint).toMatch(/Nothing was changed/);
  });
});
