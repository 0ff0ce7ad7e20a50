import fs from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { openVolume } from "../../src/volume/open-volume.js";
import { claimNextJob, enqueueJob, finishJob, jobToken, requeueRunningJobsAsSoleProcess } from "../../src/store/sqlite/jobs.js";
import { tempDir } from "../helpers/temp.js";
import { dbOf } from "../helpers/sqlite-db.js";

describe("the job queue", () => {
  it("keeps a job's token sealed until the job ends, hands each job out once, and re-queues interrupted jobs", async () => {
    const root = tempDir();
    const volume = await openVolume(root);
    const { key } = volume;
    const db = dbOf(volume);
    db.prepare("INSERT INTO libraries (id, title, source) VALUES ('/a/b', 'b', 'git')").run();
    const first = enqueueJob(db, key, { libraryId: "/a/b", kind: "ingest", payload: { url: "https://h/a/b" } }, "tok-secret-123");
    const second = enqueueJob(db, key, { libraryId: "/a/b", kind: "refresh", payload: { url: "https://h/a/b", branch: "main", version: "v1" } });
    db.pragma("wal_checkpoint(TRUNCATE)");
    expect(fs.readFileSync(path.join(root, "lds.db")).includes(Buffer.from("tok-secret-123"))).toBe(false);

    const claimed = claimNextJob(db, "runner", 60_000)!;
    expect(claimed).toMatchObject({ id: first, kind: "ingest", payload: { url: "https://h/a/b" } });
    expect(jobToken(db, key, first)).toBe("tok-secret-123");
    expect(claimNextJob(db, "runner", 60_000)!.id).toBe(second);
    expect(claimNextJob(db, "runner", 60_000)).toBeUndefined();

    // The process dies with both running: at the next start both are queued again.
    expect(requeueRunningJobsAsSoleProcess(db)).toBe(2);
    expect(claimNextJob(db, "runner", 60_000)!.id).toBe(first);
    finishJob(db, first, "runner", null);
    expect(jobToken(db, key, first)).toBeUndefined();
    expect(db.prepare("SELECT state FROM jobs WHERE id = ?").pluck().get(first)).toBe("done");
    expect(claimNextJob(db, "runner", 60_000)!.id).toBe(second);
    finishJob(db, second, "runner", "repository_not_found: gone");
    expect(db.prepare("SELECT state, error FROM jobs WHERE id = ?").get(second)).toEqual({ state: "failed", error: "repository_not_found: gone" });
    volume.close();
  });
});
