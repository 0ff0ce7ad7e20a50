import fs from "node:fs";
import path from "node:path";
import { once } from "node:events";
import { beforeEach, describe, expect, it } from "vitest";
import { openArchiveFile } from "../../src/ops/archive-file.js";
import { LdsError } from "../../src/errors.js";
import { tempDir } from "../helpers/temp.js";

describe("openArchiveFile", () => {
  let dir: string;
  beforeEach(() => {
    dir = tempDir();
  });
  const file = (name: string, body: string | Buffer) => {
    const at = path.join(dir, name);
    fs.writeFileSync(at, body);
    return at;
  };
  const codeOf = (open: () => unknown) => {
    try {
      open();
    } catch (err) {
      return err instanceof LdsError ? err.code : String(err);
    }
    return "opened";
  };

  it("reads a plain archive 1 MiB at a time and an age-encrypted one 256 KiB at a time", async () => {
    const plain = openArchiveFile(file("plain.tar", Buffer.alloc(4096, 1)));
    const sealed = openArchiveFile(file("sealed.tar.age", "age-encryption.org/v1\n-> X25519 abc\nbody\n--- mac\n"));
    // A file that starts like age's version line but is not it is read as a plain archive (the reader refuses it).
    const almost = openArchiveFile(file("almost.tar", "age-encryption.org/v2\n"));
    try {
      expect(plain.stream.readableHighWaterMark).toBe(1024 * 1024);
      expect(sealed.stream.readableHighWaterMark).toBe(256 * 1024);
      expect(almost.stream.readableHighWaterMark).toBe(1024 * 1024);
      expect(plain.size).toBe(4096);
    } finally {
      // Closed before the test's folder goes: a stream still opening would fail on the removed file.
      await Promise.all([plain, sealed, almost].map((opened) => (opened.stream.destroy(), once(opened.stream, "close"))));
    }
  });

  it("refuses a missing path, a directory and an empty file with their own errors", () => {
    expect(codeOf(() => openArchiveFile(path.join(dir, "absent.tar")))).toBe("archive_not_found");
    expect(codeOf(() => openArchiveFile(dir))).toBe("validation_error");
    expect(codeOf(() => openArchiveFile(file("empty.tar", "")))).toBe("archive_corrupt");
  });
});
