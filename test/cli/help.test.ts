import { describe, expect, it } from "vitest";
import { errorTable, LdsError } from "../../src/errors.js";
import { runCli } from "../helpers/cli.js";

describe("the error table and the CLI's help", () => {
  it("keeps the statuses the spec gives its codes", () => {
    const status = Object.fromEntries(errorTable().map((row) => [row.code, row.status]));
    expect(status).toMatchObject({
      validation_error: 400,
      invalid_library_id: 400,
      invalid_api_key: 401,
      access_denied: 403,
      forbidden: 403,
      library_not_found: 404,
      tag_not_found: 404,
      no_snippets_found: 404,
      team_not_found: 404,
      user_not_found: 404,
      no_libraries_found: 404,
      duplicate_repo: 409,
      rate_limit_exceeded: 429,
      internal_error: 500,
      timeout: 504,
    });
    expect(new LdsError("archive_corrupt", "x").exitCode).toBe(3);
  });

  it("lists every exit code in `lds --help`, and the two operator binaries have their own help", async () => {
    const help = await runCli("lds", ["--help"]);
    expect(help.exitCode).toBe(0);
    expect(help.stdout).toContain("Exit codes:");
    for (const row of errorTable()) expect(help.stdout).toContain(row.code);
    for (const command of ["serve", "backup", "restore", "verify", "inspect"]) expect(help.stdout).toContain(`lds ${command}`);

    const restoreHelp = await runCli("restore", ["--help"]);
    expect(restoreHelp.stdout).toContain("--yes");
    const backupHelp = await runCli("backup", ["--help"]);
    expect(backupHelp.stdout).toContain("--gzip");
  });

  it("answers a usage error with one line and exit code 2", async () => {
    const result = await runCli("lds", ["frobnicate"]);
    expect(result.exitCode).toBe(2);
    expect(result.stderr).toMatch(/^Error: .+\nHint: Run `lds --help`/);
    const json = await runCli("lds", ["verify", "--json"]);
    expect(json.exitCode).toBe(2);
    expect(JSON.parse(json.stderr)).toMatchObject({ error: "validation_error" });
  });
});
