import { createHash } from "node:crypto";
import { execFileSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import Database from "better-sqlite3";
import { tempDir } from "./temp.js";
import { loadVectorExtension } from "../../src/index/sqlite/vector-index.js";

/**
 * A copy of an LDS archive whose database `alter` changed (lds.db, or the vector index when `file` says so), with
 * every size and checksum in the manifest made to match again: damage that only a restore drill can see. Written
 * to `target`.
 */
export function alteredCopy(archive: string, target: string, alter: (db: Database.Database) => void, file: "db/lds.db" | "vectors/vectors.db" = "db/lds.db"): { manifest: any } {
  const work = tempDir("lds-altered-");
  execFileSync("tar", ["xf", archive, "-C", work]);
  const db = new Database(path.join(work, file));
  if (file === "vectors/vectors.db") loadVectorExtension(db);
  alter(db);
  db.close();
  const manifest = JSON.parse(fs.readFileSync(path.join(work, "manifest.json"), "utf8"));
  for (const file of manifest.files) {
    const bytes = fs.readFileSync(path.join(work, file.path));
    Object.assign(file, { size: bytes.length, sha256: createHash("sha256").update(bytes).digest("hex") });
  }
  fs.writeFileSync(path.join(work, "manifest.json"), JSON.stringify(manifest, null, 2));
  execFileSync("tar", ["cf", target, "-C", work, "manifest.json", "db/lds.db", "vectors/vectors.db", "key/secret.key"]);
  return { manifest };
}
