import { execa } from "execa";
import { describe, expect, it } from "vitest";
import { BIN, runCli } from "../helpers/cli.js";
import { client, startServer } from "../helpers/server.js";
import { tempDir } from "../helpers/temp.js";

describe("lds admin create", () => {
  it("creates an admin from stdin who can then log in; refuses short passwords and duplicates", async () => {
    const dataDir = tempDir();
    const created = await execa("node", [BIN.lds, "admin", "create", "--data-dir", dataDir, "--username", "ops", "--password-stdin"], {
      input: "a long enough passphrase\n",
      reject: false,
    });
    expect(created.exitCode, String(created.stderr)).toBe(0);
    expect(String(created.stdout)).toContain("Created admin ops");

    const short = await execa("node", [BIN.lds, "admin", "create", "--data-dir", dataDir, "--username", "x", "--password-stdin"], { input: "short\n", reject: false });
    expect(short.exitCode).toBe(2);
    expect(String(short.stderr)).toMatch(/at least 12 characters/);
    const duplicate = await runCli("lds", ["admin", "create", "--data-dir", dataDir, "--username", "ops"], { LDS_ADMIN_PASSWORD: "another long passphrase" });
    expect(duplicate.exitCode).toBe(2);
    expect(duplicate.stderr).toMatch(/already exists/);
    const noTty = await runCli("lds", ["admin", "create", "--data-dir", dataDir, "--username", "other"], { LDS_ADMIN_PASSWORD: "" });
    expect(noTty.exitCode).toBe(7);

    const server = await startServer(dataDir, { LDS_ADMIN_PASSWORD: "" });
    try {
      const api = client(server.url);
      expect((await api.login("ops", "a long enough passphrase")).status).toBe(200);
      expect((await api.login("ops", "a long enough passphrasE")).status).toBe(401);
    } finally {
      await server.stop();
    }
  });
});
