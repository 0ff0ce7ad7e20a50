import { execFileSync } from "node:child_process";
import { createHash, randomBytes } from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import { buffer } from "node:stream/consumers";
import { describe, expect, it } from "vitest";
import { ageSealing, type AgeSealing } from "../../src/archive/age-seal.js";
import { archiveBytes, type ArchiveBytes } from "../../src/archive/archive-bytes.js";
import { archiveBytesInThread, CHUNKS_AHEAD } from "../../src/archive/archive-bytes-thread.js";
import { ARCHIVE_FILES, MANIFEST_PATH } from "../../src/archive/manifest.js";
import { tempDir } from "../helpers/temp.js";

/**
 * Issue 17: the archive's bytes (tar, age's payload cipher, SHA-256) made on a thread of their own must be the bytes
 * the same pipeline makes inline, reach the reader only as fast as it takes them, and fail as the inline one does.
 */
const MiB = 1024 * 1024;
const MTIME = new Date("2026-11-24T12:00:00Z");

/** A staged snapshot as backup.ts lays it out, several 1 MiB reads long, with fixed times (the tar records them). */
function stage(dir: string, contents: Record<string, Buffer>): string {
  for (const [rel, bytes] of Object.entries(contents)) {
    fs.mkdirSync(path.dirname(path.join(dir, rel)), { recursive: true });
    fs.writeFileSync(path.join(dir, rel), bytes);
    fs.utimesSync(path.join(dir, rel), MTIME, MTIME);
  }
  return dir;
}

function snapshotContents(): Record<string, Buffer> {
  return {
    [MANIFEST_PATH]: Buffer.from('{"format":"test"}\n'),
    [ARCHIVE_FILES.db]: randomBytes(3 * MiB + 100),
    [ARCHIVE_FILES.vectors]: randomBytes(2 * MiB),
    [ARCHIVE_FILES.key]: randomBytes(32),
  };
}

async function readAll(archive: ArchiveBytes): Promise<Buffer> {
  const bytes = await buffer(archive.stream);
  await archive.removed();
  return bytes;
}

async function recipientSealing(dir: string): Promise<{ sealing: AgeSealing; identity: string }> {
  const identity = path.join(dir, "identity.txt");
  execFileSync("age-keygen", ["-o", identity], { stdio: "ignore" });
  const recipient = execFileSync("age-keygen", ["-y", identity], { encoding: "utf8" }).trim();
  return { sealing: await ageSealing({ recipients: [recipient] }), identity };
}

describe("the archive's bytes on a thread of their own", () => {
  it("are the inline pipeline's bytes, plain and encrypted (which the age CLI opens), hashed, with the staged files removed; so are the small-garbage pipeline's (256 KiB reads)", async () => {
    const dir = tempDir();
    const contents = snapshotContents();
    const { sealing, identity } = await recipientSealing(dir);
    const outputs: Record<string, Buffer> = {};
    for (const encrypted of [false, true]) {
      for (const where of ["inline", "thread", "small"] as const) {
        const stagingDir = stage(path.join(dir, `${where}-${encrypted}`), contents);
        const options = { stagingDir, gzip: false, sealing: encrypted ? sealing : undefined };
        const archive = where === "inline" ? archiveBytes(options) : where === "small" ? archiveBytes({ ...options, smallGarbage: true }) : archiveBytesInThread({ ...options, lowerPriority: true });
        const bytes = await readAll(archive);
        expect(archive.sha256()).toBe(createHash("sha256").update(bytes).digest("hex"));
        for (const rel of Object.values(ARCHIVE_FILES)) expect(fs.existsSync(path.join(stagingDir, rel)), rel).toBe(false);
        outputs[`${where}-${encrypted}`] = bytes;
      }
    }
    expect(outputs["thread-false"]!.equals(outputs["inline-false"]!)).toBe(true);
    expect(outputs["thread-true"]!.equals(outputs["inline-true"]!)).toBe(true);
    expect(outputs["small-false"]!.equals(outputs["inline-false"]!)).toBe(true);
    expect(outputs["small-true"]!.equals(outputs["inline-true"]!)).toBe(true);
    const encryptedFile = path.join(dir, "archive.tar.age");
    fs.writeFileSync(encryptedFile, outputs["thread-true"]!);
    const decrypted = execFileSync("age", ["-d", "-i", identity, encryptedFile], { maxBuffer: 64 * MiB });
    expect(decrypted.equals(outputs["inline-false"]!)).toBe(true);
    const extracted = path.join(dir, "extracted");
    fs.mkdirSync(extracted);
    execFileSync("tar", ["xf", "-", "-C", extracted], { input: decrypted });
    for (const [rel, bytes] of Object.entries(contents)) expect(fs.readFileSync(path.join(extracted, rel)).equals(bytes), rel).toBe(true);
  });

  it("sends no more than its chunks ahead while the reader takes nothing", async () => {
    const stagingDir = stage(tempDir(), { ...snapshotContents(), [ARCHIVE_FILES.vectors]: randomBytes(12 * MiB) });
    const archive = archiveBytesInThread({ stagingDir, gzip: false, lowerPriority: false });
    const aheadBytes = CHUNKS_AHEAD * MiB;
    // Nothing reads: the chunks that arrive stay in the stream's buffer.
    archive.stream.pause();
    await expect.poll(() => archive.stream.readableLength, { timeout: 30_000, interval: 20 }).toBeGreaterThanOrEqual(aheadBytes - MiB);
    // A thread that ignored its credits would have sent the whole 15 MiB by now; this one waits for the reader.
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect(archive.stream.readableLength).toBeLessThanOrEqual(aheadBytes + MiB);
    const bytes = await readAll(archive);
    expect(bytes.length).toBeGreaterThan(15 * MiB);
    expect(archive.sha256()).toBe(createHash("sha256").update(bytes).digest("hex"));
  });

  it("fails as the inline pipeline does when a staged file is missing, and settles its removals", async () => {
    for (const where of ["inline", "thread"] as const) {
      const stagingDir = stage(tempDir(), snapshotContents());
      fs.rmSync(path.join(stagingDir, ARCHIVE_FILES.vectors));
      const options = { stagingDir, gzip: false };
      const archive = where === "inline" ? archiveBytes(options) : archiveBytesInThread({ ...options, lowerPriority: false });
      await expect(buffer(archive.stream), where).rejects.toThrow(/ENOENT|no such file/);
      await archive.removed();
      expect(() => archive.sha256(), where).toThrow();
    }
  });
});
