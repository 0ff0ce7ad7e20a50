import { describe, expect, it } from "vitest";
import { ARCHIVE_FILES } from "../../src/archive/manifest.js";
import { dataVolume } from "../../src/config/data-volume.js";
import { chooseEngine, DEFAULT_ENGINE } from "../../src/engine/choose-engine.js";
import { isLdsError } from "../../src/errors.js";
import { openVolume } from "../../src/volume/open-volume.js";
import { tempDir } from "../helpers/temp.js";

describe("the choice of a volume's engine", () => {
  it("is SQLite when the settings name none, one engine object per name", () => {
    const volume = dataVolume(tempDir());
    expect(volume.engine).toBe(DEFAULT_ENGINE);
    expect(chooseEngine(volume).name).toBe("sqlite");
    expect(chooseEngine({ engine: "sqlite" })).toBe(chooseEngine(volume));
    expect(chooseEngine(volume).files(volume)).toEqual({ records: `${volume.root}/lds.db`, vectors: `${volume.root}/vectors.db` });
  });

  it("names the files an archive carries: the format writes them out, and they must stay the engine's", () => {
    const { fileNames } = chooseEngine({ engine: DEFAULT_ENGINE });
    expect([ARCHIVE_FILES.db, ARCHIVE_FILES.vectors]).toEqual([`db/${fileNames.records}`, `vectors/${fileNames.vectors}`]);
  });

  it("refuses an engine this LDS does not have, naming it and those it has", () => {
    let error: unknown;
    try {
      chooseEngine({ engine: "postgres" });
    } catch (err) {
      error = err;
    }
    expect(isLdsError(error, "validation_error")).toBe(true);
    expect((error as Error).message).toBe('There is no database engine called "postgres"; this LDS has "sqlite".');
    expect((error as { hint?: string }).hint).toMatch(/sqlite is the default/);
  });

  it("is made before anything is opened: a volume set to an unknown engine is not created", async () => {
    const root = `${tempDir()}/volume`;
    await expect(openVolume(root, undefined, { engine: "postgres" })).rejects.toMatchObject({ code: "validation_error" });
    expect(await import("node:fs").then((fs) => fs.existsSync(root))).toBe(false);
  });
});
