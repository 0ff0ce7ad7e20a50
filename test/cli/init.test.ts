import { describe, expect, it } from "vitest";
import { runCli } from "../helpers/cli.js";
import { startServer } from "../helpers/server.js";
import { tempDir } from "../helpers/temp.js";

describe("the first-run path", () => {
  it("a new server says how to get a key; lds init makes one that the API accepts; keys list says when there is none", async () => {
    const dataDir = tempDir();
    const empty = await runCli("lds", ["keys", "list", "--data-dir", dataDir]);
    expect(empty.stdout).toBe("No API keys yet. Create the first with: lds init --team NAME --email EMAIL (or lds keys create --email EMAIL).");
    const server = await startServer(dataDir);
    try {
      expect(server.output()).toContain("No API key exists yet: create the first team, owner and key with `lds init --email EMAIL`");
      const init = await runCli("lds", ["init", "--email", "ops@example.com", "--data-dir", dataDir]);
      expect(init.exitCode, init.stderr).toBe(0);
      const key = /^ {2}(ldssk-\S+)$/m.exec(init.stdout)![1]!;
      expect(init.stdout).toContain("Created team default (enterprise plan) with owner ops@example.com, and this API key:");
      const search = await fetch(`${server.url}/v2/libs/search?libraryName=anything`, { headers: { authorization: `Bearer ${key}` } });
      expect(search.status).toBe(404);
      expect(((await search.json()) as { error: string }).error).toBe("no_libraries_found");
      const again = await runCli("lds", ["init", "--email", "other@example.com", "--data-dir", dataDir]);
      expect(again.exitCode).toBe(2);
      expect(again.stderr).toMatch(/^Error: This data volume already has teams/m);
    } finally {
      await server.stop();
    }
  });
});
