import { describe, expect, it } from "vitest";
import { dataVolume } from "../../src/config/data-volume.js";
import { LdsError } from "../../src/errors.js";
import { lockBackup } from "../../src/locks/volume-locks.js";
import { tempDir } from "../helpers/temp.js";

function refusal(take: () => unknown): LdsError {
  try {
    take();
  } catch (err) {
    if (err instanceof LdsError) return err;
    throw err;
  }
  throw new Error("the lock was taken");
}

describe("backup.lock held for a staged restore (issue 39, item 6)", () => {
  it("keeps backups out with volume_locked while a restore is being staged, and staging out with backup_running while a backup runs", () => {
    const volume = dataVolume(tempDir());
    const staging = lockBackup(volume, "restore staged");
    const backup = refusal(() => lockBackup(volume));
    expect(backup.code).toBe("volume_locked");
    expect(backup.message).toMatch(new RegExp(`^A restore is being staged on .*: the LDS server \\(pid ${process.pid} on .*\\) restarts to apply it and starts no backup before`));
    expect(backup.hint).toBe("Back up once the server has restarted on the restored data.");
    staging.release();

    const running = lockBackup(volume);
    const stage = refusal(() => lockBackup(volume, "restore staged"));
    expect(stage.code).toBe("backup_running");
    expect(stage.message).toMatch(new RegExp(`already running \\(lds backup, pid ${process.pid} on `));
    running.release();
  });
});
