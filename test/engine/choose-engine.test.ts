import { describe, expect, it } from "vitest";
import { ARCHIVE_FILES } from "../../src/archive/manifest.js";
import { dataVolume } from "../../src/config/data-volume.js";
import { databaseSettingsFromEnv } from "../../src/config/database-settings.js";
import { chooseEngine, DEFAULT_ENGINE } from "../../src/engine/choose-engine.js";
import { isLdsError } from "../../src/errors.js";
import { openVolume } from "../../src/volume/open-volume.js";
import { tempDir } from "../helpers/temp.js";

describe("the choice of a volume's engine", () => {
  it("is SQLite when the settings name none, one engine object per name", () => {
    const volume = dataVolume(tempDir());
    expect(volume.engine).toEqual({ name: DEFAULT_ENGINE });
    expect(chooseEngine(volume).name).toBe("sqlite");
    expect(chooseEngine({ engine: { name: "sqlite" } })).toBe(chooseEngine(volume));
    expect(chooseEngine(volume).files(volume)).toEqual({ records: `${volume.root}/lds.db`, vectors: `${volume.root}/vectors.db` });
  });

  it("names the files an archive carries: the format writes them out, and they must stay the engine's", () => {
    const { fileNames } = chooseEngine({ engine: { name: DEFAULT_ENGINE } });
    expect([ARCHIVE_FILES.db, ARCHIVE_FILES.vectors]).toEqual([`db/${fileNames.records}`, `vectors/${fileNames.vectors}`]);
  });

  it("refuses an engine this LDS does not have, naming it and those it has", () => {
    let error: unknown;
    try {
      chooseEngine({ engine: { name: "mysql" } });
    } catch (err) {
      error = err;
    }
    expect(isLdsError(error, "validation_error")).toBe(true);
    expect((error as Error).message).toBe('There is no database engine called "mysql"; this LDS has "sqlite", "postgres".');
    expect((error as { hint?: string }).hint).toMatch(/sqlite is the default/);
  });

  it("is made before anything is opened: a volume set to an unknown engine is not created", async () => {
    const root = `${tempDir()}/volume`;
    await expect(openVolume(root, undefined, { engine: { name: "mysql" } as never })).rejects.toMatchObject({ code: "validation_error" });
    expect(await import("node:fs").then((fs) => fs.existsSync(root))).toBe(false);
  });

  it("lets only the server use PostgreSQL's search index (its replica's files), the command line ingest, and only the command line back it up, restore and rotate the key", () => {
    const engine = chooseEngine({ engine: { name: "postgres" } });
    expect(engine.notYet("search", "lds serve")).toBeUndefined();
    expect(engine.notYet("ingestion", "lds ingest git")).toBeUndefined();
    expect(engine.notYet("snapshot", "lds backup")).toBeUndefined();
    expect(engine.notYet("restore", "lds restore")).toBeUndefined();
    expect(engine.notYet("keyRotation", "lds secrets rotate-key")).toBeUndefined();
    expect(engine.sharedByReplicas).toBe(true);
    for (const [work, command] of [
      ["search", "lds search"],
      ["search", "lds ingest git"],
      ["ingestion", "lds index rebuild"],
      ["restore", "restores staged from the dashboard"],
      ["keyRotation", "lds serve"],
    ] as const) {
      expect(engine.notYet(work, command), command).toMatchObject({ code: "engine_unsupported" });
    }
    const sqlite = chooseEngine({ engine: { name: "sqlite" } });
    expect(sqlite.sharedByReplicas).toBe(false);
    expect(sqlite.notYet("search", "lds search")).toBeUndefined();
  });

  it("refuses to open the search side of a PostgreSQL volume before anything is created or connected", async () => {
    const root = `${tempDir()}/volume`;
    const settings = databaseSettingsFromEnv({ LDS_DATABASE_URL: "postgres://lds:secret@127.0.0.1:1/lds", LDS_SECRET_KEY_FILE: `${root}/key` });
    await expect(openVolume(root, undefined, { engine: settings, command: "lds context" })).rejects.toMatchObject({
      code: "engine_unsupported",
      message: expect.stringMatching(/^`lds context` is not available on PostgreSQL yet: it needs the search index/),
    });
    expect(await import("node:fs").then((fs) => fs.existsSync(root))).toBe(false);
  });
});
