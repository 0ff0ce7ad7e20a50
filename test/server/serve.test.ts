import fs from "node:fs";
import path from "node:path";
import { LATEST_SCHEMA_VERSION } from "../../src/engine/sqlite/migrations.js";
import { describe, expect, it } from "vitest";
import { spawnCli, runCli } from "../helpers/cli.js";
import { tempDir } from "../helpers/temp.js";

/** Start `lds serve` as a real child process on a free port and wait until it answers. */
async function startServer(dataDir: string) {
  const child = spawnCli("lds", ["serve", "--data-dir", dataDir, "--port", "0"], { LDS_LOG_LEVEL: "info" });
  const url = await new Promise<string>((resolve, reject) => {
    let out = "";
    child.stdout!.on("data", (d: Buffer) => {
      out += d.toString();
      const match = /"url":"(http:\/\/[^"]+)"/.exec(out);
      if (match) resolve(match[1]!);
    });
    child.on("exit", () => reject(new Error(`server exited: ${out}`)));
  });
  return { child, url };
}

describe("lds serve", () => {
  it("creates the data volume, answers /api/health and /api/ready, refuses a second server and stops cleanly on SIGTERM", async () => {
    const dataDir = path.join(tempDir(), "data");
    const { child, url } = await startServer(dataDir);
    try {
      const health = await fetch(`${url}/api/health`);
      expect(health.status).toBe(200);
      const body = (await health.json()) as Record<string, unknown>;
      expect(body).toMatchObject({ status: "ok", schemaVersion: LATEST_SCHEMA_VERSION });
      expect(typeof body.version).toBe("string");
      // SQLite's index is written with the records: never behind, so no search lag, and ready once serving.
      expect(body).not.toHaveProperty("search");
      const ready = await fetch(`${url}/api/ready`);
      expect(ready.status).toBe(200);
      expect(await ready.json()).toEqual({ status: "ready" });

      const missing = await fetch(`${url}/api/nope`);
      expect(missing.status).toBe(404);
      expect(await missing.json()).toMatchObject({ error: "route_not_found" });

      for (const name of ["lds.db", "vectors.db", "secret.key", "server.lock"]) expect(fs.existsSync(path.join(dataDir, name))).toBe(true);
      expect(fs.statSync(dataDir).mode & 0o777).toBe(0o700);

      const second = await runCli("lds", ["serve", "--data-dir", dataDir, "--port", "0"]);
      expect(second.exitCode).toBe(5);
      expect(second.stderr).toMatch(/^Error: The data volume .* is in use by an LDS server \(pid \d+/m);
      expect(second.stderr).toMatch(/^Hint: Stop that server first/m);
    } finally {
      child.kill("SIGTERM");
    }
    const result = await child;
    expect(result.exitCode).toBe(0);
    expect(String(result.stdout)).toContain("LDS stopped");
    expect(fs.existsSync(path.join(dataDir, "server.lock"))).toBe(false);
  });

  it("recovers the lock of a server killed with SIGKILL", async () => {
    const dataDir = tempDir();
    const first = await startServer(dataDir);
    first.child.kill("SIGKILL");
    await first.child;
    expect(fs.existsSync(path.join(dataDir, "server.lock"))).toBe(true);
    const second = await startServer(dataDir);
    expect((await fetch(`${second.url}/api/health`)).status).toBe(200);
    second.child.kill("SIGTERM");
    expect((await second.child).exitCode).toBe(0);
  });

  it("refuses a setting it cannot use, naming the variable, before touching the volume", async () => {
    const dataDir = path.join(tempDir(), "volume");
    const result = await runCli("lds", ["serve", "--data-dir", dataDir, "--port", "0"], { LDS_JOB_CONCURRENCY: "lots" });
    expect(result.exitCode).toBe(2);
    expect(result.stderr).toMatch(/^Error: LDS_JOB_CONCURRENCY must be a whole number of at least 1 \(got "lots"\)\./m);
    expect(result.stderr).toMatch(/^Hint: Correct or unset LDS_JOB_CONCURRENCY \(unset: 2\), then start again\./m);
    expect(fs.existsSync(dataDir)).toBe(false);
  });

  it("exits with a clear error when the port is taken", async () => {
    const dataDir = tempDir();
    const { child, url } = await startServer(dataDir);
    try {
      const port = new URL(url).port;
      const otherDir = tempDir();
      const other = await runCli("lds", ["serve", "--data-dir", otherDir, "--port", port]);
      expect(other.exitCode).toBe(5);
      expect(other.stderr).toContain(`127.0.0.1:${port} is already in use`);
      // Listening is the last step: everything opened before it was closed again, server.lock last.
      expect(fs.existsSync(path.join(otherDir, "lds.db"))).toBe(true);
      expect(fs.existsSync(path.join(otherDir, "server.lock"))).toBe(false);
    } finally {
      child.kill("SIGTERM");
      await child;
    }
  });
});
