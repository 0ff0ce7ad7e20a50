import { describe, expect, it } from "vitest";
import { runCli } from "../helpers/cli.js";
import { tempDir } from "../helpers/temp.js";

describe("lds connections (headless installs)", () => {
  it("adds a pasted git token, lists it without the token, and removes it with its sealed secret", async () => {
    const dataDir = tempDir();
    const lds = (args: string[], env: Record<string, string> = {}) => runCli("lds", [...args, "--data-dir", dataDir], env);
    expect((await lds(["teams", "create", "docs"])).exitCode).toBe(0);
    const added = await lds(["connections", "add-git", "--team", "docs", "--host", "git.example.test"], { LDS_CONNECTION_TOKEN: "pasted-token-123" });
    expect(added.exitCode, added.stderr).toBe(0);
    const listed = await lds(["connections", "list", "--json"]);
    expect(listed.exitCode, listed.stderr).toBe(0);
    const [connection] = JSON.parse(listed.stdout).connections;
    expect(connection).toMatchObject({ team: "docs", kind: "git", validFor: ["git.example.test"], madeBy: "pasted token", state: "active" });
    expect(listed.stdout).not.toContain("pasted-token-123");
    expect((await lds(["connections", "list"])).stdout).toContain("git.example.test");

    const removed = await lds(["connections", "remove", String(connection.id)]);
    expect(removed.exitCode, removed.stderr).toBe(0);
    expect(JSON.parse((await lds(["connections", "list", "--json"])).stdout).connections).toEqual([]);
    const again = await lds(["connections", "remove", String(connection.id)]);
    expect(again.exitCode).toBe(4);
    expect(again.stderr).toMatch(/No connection/);
  });
});
