import fs from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { FORMAT_VERSION } from "../../src/archive/manifest.js";
import { makeArchive } from "../helpers/archives.js";
import { runCli } from "../helpers/cli.js";
import { tempDir } from "../helpers/temp.js";

describe("lds inspect", () => {
  it("needs only the first few KB of an archive, where verify needs all of it", async () => {
    const { archive } = await makeArchive({ libraries: [{ id: "/acme/widgets", snippets: 4 }], runningJobFor: "/acme/widgets" });
    const head = path.join(tempDir(), "head-only.tar");
    fs.writeFileSync(head, fs.readFileSync(archive).subarray(0, 8 * 1024));

    const result = await runCli("lds", ["inspect", head]);
    expect(result.exitCode, result.stderr).toBe(0);
    expect(result.stdout).toMatch(/^Created: +\d{4}-\d\d-\d\dT/m);
    expect(result.stdout).toMatch(new RegExp(`App version: +\\d+\\.\\d+\\.\\d+ \\(format ${FORMAT_VERSION}, schema \\d+\\)`));
    expect(result.stdout).toContain("/acme/widgets  finalized, 4 snippets (partial)");
    expect(result.stdout).toContain("Restorable:     yes");
    const json = JSON.parse((await runCli("lds", ["inspect", head, "--json"])).stdout);
    expect(json).toMatchObject({ format: "lds-backup", formatVersion: FORMAT_VERSION, partial: ["/acme/widgets"] });
    expect(json.files).toBeUndefined();

    expect((await runCli("lds", ["verify", head])).exitCode).toBe(3);
  });
});
