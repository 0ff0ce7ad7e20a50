import fs from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { openVolume } from "../../src/volume/open-volume.js";
import { runCli } from "../helpers/cli.js";
import { startServer } from "../helpers/server.js";
import { tempDir } from "../helpers/temp.js";
import { seedVolume } from "../helpers/volume.js";

const SECRET = "ghp_rotate-me-token";
const NAME = "team:1:git-token";

async function secretOf(dataDir: string): Promise<string | undefined> {
  const volume = await openVolume(dataDir);
  try {
    return await volume.store.settings.secret(NAME);
  } finally {
    volume.close();
  }
}

describe("lds secrets rotate-key (issue 15)", () => {
  it("re-seals every secret with a new key and keeps the old one; archives made before still restore", async () => {
    const dataDir = tempDir("lds-rotate-");
    await seedVolume(dataDir, { secret: SECRET });
    const oldKey = fs.readFileSync(path.join(dataDir, "secret.key"));
    const out = path.join(tempDir("lds-rotate-out-"), "archives");
    expect((await runCli("backup", ["--data-dir", dataDir, "--to", out])).exitCode).toBe(0);
    const archive = path.join(out, fs.readdirSync(out)[0]!);

    const rotated = await runCli("lds", ["secrets", "rotate-key", "--data-dir", dataDir, "--json"]);
    expect(rotated.exitCode, rotated.stderr).toBe(0);
    const result = JSON.parse(rotated.stdout);
    expect(result).toMatchObject({ resealed: 1, oldKeyFile: expect.stringMatching(/secret\.key\.old-\d{8}T\d{6}Z$/) });
    expect(fs.readFileSync(result.oldKeyFile).equals(oldKey)).toBe(true);
    expect((fs.statSync(result.oldKeyFile).mode & 0o777).toString(8)).toBe("600");
    expect(fs.readFileSync(path.join(dataDir, "secret.key")).equals(oldKey)).toBe(false);
    expect(fs.existsSync(path.join(dataDir, "secret.key.new"))).toBe(false);
    expect(await secretOf(dataDir)).toBe(SECRET);

    // The archive of before carries the key its database was sealed with.
    const restoredDir = tempDir("lds-rotate-restored-");
    const restored = await runCli("restore", [archive, "--data-dir", restoredDir, "--yes"]);
    expect(restored.exitCode, restored.stderr).toBe(0);
    expect(await secretOf(restoredDir)).toBe(SECRET);
    const text = await runCli("lds", ["secrets", "rotate-key", "--data-dir", restoredDir]);
    expect(text.stdout).toContain("Archives made before now carry the key they were sealed with: they still restore as they are.");
  });

  it("leaves a volume whose secrets unseal after a kill -9 at any step", async () => {
    let completed = false;
    let steps = 0;
    for (let n = 1; n <= 12 && !completed; n++) {
      const dataDir = tempDir("lds-rotate-crash-");
      await seedVolume(dataDir, { secret: SECRET });
      const oldKey = fs.readFileSync(path.join(dataDir, "secret.key"));
      const r = await runCli("lds", ["secrets", "rotate-key", "--data-dir", dataDir], { LDS_FAILPOINT: `@${n}` });
      completed = r.exitCode === 0;
      if (!completed) {
        steps++;
        expect(r.exitCode, `step ${n}: ${r.stderr}`).toBe(-1); // killed by SIGKILL
      }
      // Opening the volume finishes or drops the interrupted rotation: the secret unseals either way.
      expect(await secretOf(dataDir), `after a kill at step ${n}`).toBe(SECRET);
      expect(fs.existsSync(path.join(dataDir, "secret.key.new")), `step ${n}`).toBe(false);
      const key = fs.readFileSync(path.join(dataDir, "secret.key"));
      if (n <= 2 && !completed) expect(key.equals(oldKey), `step ${n}: the old key stays`).toBe(true);
      if (n >= 3) expect(key.equals(oldKey), `step ${n}: the new key took its place`).toBe(false);
    }
    expect(completed).toBe(true);
    expect(steps).toBe(4);
  }, 120_000);

  it("is refused while a server holds the volume", async () => {
    const dataDir = tempDir("lds-rotate-busy-");
    await seedVolume(dataDir, { secret: SECRET });
    const server = await startServer(dataDir);
    try {
      const refused = await runCli("lds", ["secrets", "rotate-key", "--data-dir", dataDir]);
      expect(refused.exitCode).toBe(5);
      expect(refused.stderr).toMatch(/in use by an LDS server/);
    } finally {
      await server.stop();
    }
    expect(await secretOf(dataDir)).toBe(SECRET);
  });
});
