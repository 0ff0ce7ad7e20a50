import { randomBytes } from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import zlib from "node:zlib";
import Database from "better-sqlite3";
import { beforeAll, describe, expect, it } from "vitest";
import { isLdsError } from "../../src/errors.js";
import { restore } from "../../src/ops/restore.js";
import { verify } from "../../src/ops/verify.js";
import { makeArchive, readEntries, refreshChecksums, writeRawTar, type RawEntry } from "../helpers/archives.js";
import { runCli } from "../helpers/cli.js";
import { tempDir } from "../helpers/temp.js";
import { fingerprintTree, seedVolume } from "../helpers/volume.js";

let goodBytes: Buffer;
let entries: RawEntry[];

beforeAll(async () => {
  // Kept in memory: temporary folders are removed after each test.
  const good = (await makeArchive()).archive;
  goodBytes = fs.readFileSync(good);
  entries = await readEntries(good);
});

const [manifest, db, vectors, key] = [0, 1, 2, 3].map((i) => () => ({ ...entries[i]! }));
const build = (list: RawEntry[]) => writeRawTar(path.join(tempDir("lds-hostile-"), "hostile.tar"), list);
const bytes = (content: Buffer | string) => {
  const file = path.join(tempDir("lds-hostile-"), "hostile.tar");
  fs.writeFileSync(file, content);
  return file;
};

/** Alter one file and recompute the manifest's sizes and checksums: damage that only the deeper checks catch. */
function withValidChecksums(alter: (entry: RawEntry) => void, target: string): string {
  const list = [manifest(), db(), vectors(), key()];
  alter(list.find((e) => e.path === target)!);
  const m = JSON.parse(list[0]!.body!.toString());
  refreshChecksums(m, list);
  list[0]!.body = Buffer.from(JSON.stringify(m));
  return build(list);
}

/** Change a database entry with SQL (shadow tables included), then VACUUM it as a backup leaves it (no free pages). */
function alterDatabase(entry: RawEntry, sql: string): void {
  const file = path.join(tempDir("lds-hostile-"), "altered.db");
  fs.writeFileSync(file, entry.body!);
  const altered = new Database(file);
  altered.unsafeMode(true);
  altered.exec(sql);
  altered.exec("VACUUM");
  altered.close();
  entry.body = fs.readFileSync(file);
}

/** One more page at the end of the file that no table uses, the header's page count raised to include it. */
function addUnusedPage(entry: RawEntry): void {
  const pageSize = entry.body!.readUInt16BE(16);
  const body = Buffer.concat([entry.body!, Buffer.alloc(pageSize)]);
  body.writeUInt32BE(body.readUInt32BE(28) + 1, 28);
  entry.body = body;
}

const cases: Array<{ name: string; code: "archive_unsafe" | "archive_corrupt"; message: RegExp; make: () => string }> = [
  { name: "a ../ path", code: "archive_unsafe", message: /unsafe path/, make: () => build([manifest(), { path: "../escaped", body: Buffer.from("x") }, db(), vectors(), key()]) },
  { name: "an absolute path", code: "archive_unsafe", message: /unsafe path/, make: () => build([manifest(), { path: "/tmp/lds-escaped", body: Buffer.from("x") }, db(), vectors(), key()]) },
  { name: "a symlink", code: "archive_unsafe", message: /SymbolicLink/, make: () => build([manifest(), { path: "db/lds.db", type: "SymbolicLink", linkpath: "/etc/passwd" }, vectors(), key()]) },
  { name: "a hard link", code: "archive_unsafe", message: /Link/, make: () => build([manifest(), { path: "db/lds.db", type: "Link", linkpath: "key/secret.key" }, vectors(), key()]) },
  { name: "a character device", code: "archive_unsafe", message: /CharacterDevice/, make: () => build([manifest(), { path: "db/lds.db", type: "CharacterDevice" }, vectors(), key()]) },
  { name: "a FIFO", code: "archive_unsafe", message: /FIFO/, make: () => build([manifest(), { path: "db/lds.db", type: "FIFO" }, vectors(), key()]) },
  { name: "a directory entry", code: "archive_unsafe", message: /Directory/, make: () => build([manifest(), { path: "db/", type: "Directory" }, db(), vectors(), key()]) },
  {
    name: "an entry not in the manifest",
    code: "archive_unsafe",
    message: /not listed in the manifest/,
    make: () => build([manifest(), db(), { path: "extra.sh", body: Buffer.from("rm -rf /") }, vectors(), key()]),
  },
  { name: "a duplicate entry", code: "archive_unsafe", message: /appears twice/, make: () => build([manifest(), db(), db(), vectors(), key()]) },
  { name: "a missing manifest", code: "archive_unsafe", message: /first entry is "db\/lds.db"/, make: () => build([db(), vectors(), key()]) },
  { name: "a manifest that is not first", code: "archive_unsafe", message: /not manifest.json/, make: () => build([db(), manifest(), vectors(), key()]) },
  { name: "an invalid manifest", code: "archive_corrupt", message: /not valid JSON/, make: () => build([{ path: "manifest.json", body: Buffer.from("{not json") }, db(), vectors(), key()]) },
  {
    name: "a manifest of the wrong shape",
    code: "archive_corrupt",
    message: /manifest.json is invalid/,
    make: () => build([{ path: "manifest.json", body: Buffer.from(JSON.stringify({ format: "lds-backup", formatVersion: 1, files: "all" })) }, db(), vectors(), key()]),
  },
  { name: "an enormous manifest", code: "archive_unsafe", message: /over the .* limit/, make: () => build([{ path: "manifest.json", body: Buffer.alloc(9 * 1024 * 1024, 0x20) }, db(), vectors(), key()]) },
  {
    name: "a checksum mismatch",
    code: "archive_corrupt",
    message: /db\/lds.db fails its checksum/,
    make: () => {
      const d = db();
      d.body = Buffer.from(d.body!);
      d.body[5000]! ^= 0xff;
      return build([manifest(), d, vectors(), key()]);
    },
  },
  {
    name: "a size that differs from the manifest",
    code: "archive_corrupt",
    message: /the manifest says/,
    make: () => {
      const k = key();
      k.body = Buffer.concat([k.body!, Buffer.from("x")]);
      return build([manifest(), db(), vectors(), k]);
    },
  },
  { name: "a missing file", code: "archive_corrupt", message: /key\/secret.key missing/, make: () => build([manifest(), db(), vectors()]) },
  {
    name: "a database that fails integrity_check (checksums recomputed)",
    code: "archive_corrupt",
    message: /db\/lds.db (fails SQLite's integrity_check|is not a readable SQLite database)/,
    make: () =>
      withValidChecksums((d) => {
        d.body = Buffer.from(d.body!);
        d.body.fill(0xff, 4096, 4200);
      }, "db/lds.db"),
  },
  {
    name: "a damaged full-text index (checksums recomputed)",
    code: "archive_corrupt",
    message: /db\/lds.db fails SQLite's integrity_check \(fts5: corruption found/,
    make: () => withValidChecksums((d) => alterDatabase(d, "UPDATE snippets_fts_data SET block = zeroblob(length(block)) WHERE id = (SELECT max(id) FROM snippets_fts_data)"), "db/lds.db"),
  },
  {
    name: "a database page no table uses (checksums recomputed)",
    code: "archive_corrupt",
    message: /db\/lds.db fails SQLite's integrity_check \(.*never used/,
    make: () => withValidChecksums(addUnusedPage, "db/lds.db"),
  },
  {
    name: "a key of the wrong length (checksums recomputed)",
    code: "archive_corrupt",
    message: /key\/secret.key is 16 bytes/,
    make: () =>
      withValidChecksums((k) => {
        k.body = k.body!.subarray(0, 16);
      }, "key/secret.key"),
  },
  {
    name: "a key that does not belong to its database (checksums recomputed)",
    code: "archive_corrupt",
    message: /key\/secret.key is not the key db\/lds.db was sealed with/,
    make: () =>
      withValidChecksums((k) => {
        k.body = randomBytes(32);
      }, "key/secret.key"),
  },
  { name: "a truncated archive", code: "archive_corrupt", message: /tar|truncated/i, make: () => bytes(goodBytes.subarray(0, Math.floor(goodBytes.length / 2) + 100)) },
  { name: "gzip garbage", code: "archive_corrupt", message: /gzip/i, make: () => bytes(Buffer.concat([Buffer.from([0x1f, 0x8b, 0x08, 0x00]), Buffer.alloc(4096, 0x5a)])) },
  {
    name: "a truncated gzip archive",
    code: "archive_corrupt",
    message: /gzip|truncated|tar/i,
    make: () => {
      const gz = zlib.gzipSync(goodBytes);
      return bytes(gz.subarray(0, gz.length - 2000));
    },
  },
  { name: "an empty file", code: "archive_corrupt", message: /is empty/, make: () => bytes(Buffer.alloc(0)) },
  { name: "a file that is not a tar", code: "archive_corrupt", message: /not a valid tar|no manifest/, make: () => bytes("this is a text file, not an archive\n".repeat(100)) },
];

describe("hostile archives", () => {
  it.each(cases)("are refused by verify: $name", async ({ code, message, make }) => {
    const archive = make();
    let caught: unknown;
    try {
      await verify(archive, { tempDir: tempDir() });
    } catch (err) {
      caught = err;
    }
    expect(isLdsError(caught, code), String(caught)).toBe(true);
    expect((caught as Error).message).toMatch(message);
  });

  it.each(cases)("leave the data volume untouched on restore: $name", async ({ code, make }) => {
    const archive = make();
    const dataDir = tempDir("lds-target-");
    await seedVolume(dataDir, { libraries: [{ id: "/keep/me" }] });
    const before = fingerprintTree(dataDir);
    await expect(restore({ dataDir, archive, confirm: async () => true })).rejects.toMatchObject({ code });
    expect(fingerprintTree(dataDir)).toEqual(before);
    expect(fs.existsSync("/tmp/lds-escaped")).toBe(false);
    expect(fs.existsSync(path.join(dataDir, "..", "escaped"))).toBe(false);
  });

  it("never keep setuid bits or modes from the archive", async () => {
    const d = db();
    d.mode = 0o4777;
    const archive = build([manifest(), d, vectors(), key()]);
    const dataDir = tempDir();
    await restore({ dataDir, archive, confirm: async () => true });
    expect(fs.statSync(path.join(dataDir, "lds.db")).mode & 0o7777).toBe(0o600);
  });

  it("get exit code 3 and a one-line error with a hint from the CLI", async () => {
    const result = await runCli("lds", ["verify", cases[0]!.make()]);
    expect(result.exitCode).toBe(3);
    expect(result.stderr).toMatch(/^Error: The archive was refused: entry "..\/escaped" has an unsafe path.\nHint: Nothing was changed/);
    const missing = await runCli("lds", ["verify", "/nonexistent/archive.tar"]);
    expect(missing.exitCode).toBe(4);
  });
});
