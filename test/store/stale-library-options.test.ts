import { afterEach, describe, expect, it } from "vitest";
import { openVolume, type OpenVolume } from "../../src/volume/open-volume.js";
import { dbOf } from "../helpers/sqlite-db.js";
import { tempDir } from "../helpers/temp.js";
import { newLibrary } from "./contract/libraries.contract.js";

const open: OpenVolume[] = [];
afterEach(() => {
  for (const volume of open.splice(0)) volume.close();
});

describe("a library id used again on a volume an older LDS wrote", () => {
  it("does not inherit the options a removed library left behind (LDS before 0.7.12 did not delete them)", async () => {
    const volume = await openVolume(tempDir());
    open.push(volume);
    // What 0.7.11's remove left: the options setting of a library that no longer exists.
    dbOf(volume)
      .prepare("INSERT INTO settings (key, value) VALUES (?, ?)")
      .run("library.options:/acme/widgets", JSON.stringify({ branch: "old", generateDocs: true }));
    await volume.store.libraries.create(newLibrary("/acme/widgets"));
    expect(await volume.store.libraries.options("/acme/widgets")).toEqual({});
    // Created with options of its own: those, and only those.
    dbOf(volume)
      .prepare("INSERT INTO settings (key, value) VALUES (?, ?)")
      .run("library.options:/acme/tools", JSON.stringify({ branch: "old" }));
    await volume.store.libraries.createWithJob(newLibrary("/acme/tools"), { branch: "dev" }, { url: "https://git.example.test/acme/tools", branch: "dev" });
    expect(await volume.store.libraries.options("/acme/tools")).toEqual({ branch: "dev" });
  });
});
