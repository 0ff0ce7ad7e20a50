import fs from "node:fs";
import Database from "better-sqlite3";
import { LdsError } from "../../errors.js";
import { KEY_BYTES } from "../../secrets/seal.js";
import { keyMismatch } from "./key-match.js";
import { schemaVersion } from "./migrate.js";
import { loadVectorExtension } from "../../index/sqlite/vector-index.js";
import type { ArchiveCopies, ArchiveCopiesCheck } from "../engine.js";
import { checkStoredTables, expectOk, IntegrityProblem, openForCheck } from "./database-checks.js";

/**
 * Check an archive's extracted copies beyond their checksums: a checksum proves the bytes are the ones written at
 * backup time, these checks prove those bytes are usable databases and a usable key. `searchIndexCheckedElsewhere`:
 * lds.db's virtual tables (its full-text index) were checked on another thread (checkVirtualTablesInThread) while
 * the rest of the archive streamed.
 */
export function checkArchiveCopies(copies: ArchiveCopies, options: { searchIndexCheckedElsewhere: boolean }): ArchiveCopiesCheck {
  const { records, vectors, key } = copies;
  const keySize = fs.statSync(key.file).size;
  if (keySize !== KEY_BYTES) throw damaged(key.name, `is ${keySize} bytes, a key is ${KEY_BYTES}`);

  const version = checkDatabase(records.file, records.name, { vectors: false, virtualTables: !options.searchIndexCheckedElsewhere });
  checkDatabase(vectors.file, vectors.name, { vectors: true, virtualTables: true });
  const mismatch = withDatabase(records.file, (db) => keyMismatch(db, fs.readFileSync(key.file)));
  if (mismatch) {
    throw archiveDamaged(
      `${key.name} is not the key ${records.name} was sealed with (${mismatch}); a server could not start on it`,
      "Nothing was changed. Use another archive (made by 0.4 or later, which checks this when it writes one).",
    );
  }
  return {
    schemaVersion: version,
    details: {
      records: `integrity_check ok, schema version ${version}`,
      vectors: "integrity_check ok, vector table readable",
      key: `${KEY_BYTES} bytes, the key the database was sealed with`,
    },
  };
}

function checkDatabase(file: string, part: string, what: { vectors: boolean; virtualTables: boolean }): number {
  return runCheck(file, part, (db) => {
    if (what.virtualTables) expectOk(db.pragma("integrity_check", { simple: true }));
    else checkStoredTables(db);
    if (what.vectors) {
      loadVectorExtension(db);
      const hasTable = db.prepare("SELECT 1 FROM sqlite_master WHERE name = 'vec_snippets'").get();
      if (hasTable) db.prepare("SELECT count(*) FROM vec_snippets").get();
    }
    return schemaVersion(db);
  });
}

/** Open `file` for checking and run `check`; an integrity failure or an unreadable file names `part` as damaged. */
function runCheck<T>(file: string, part: string, check: (db: Database.Database) => T): T {
  let db: Database.Database | undefined;
  try {
    db = openForCheck(file);
    return check(db);
  } catch (err) {
    if (err instanceof LdsError) throw err;
    throw damagedDatabase(part, err instanceof IntegrityProblem, (err as Error).message);
  } finally {
    db?.close();
  }
}

function withDatabase<T>(file: string, use: (db: Database.Database) => T): T {
  const db = new Database(file, { readonly: true, fileMustExist: true });
  try {
    return use(db);
  } finally {
    db.close();
  }
}

/** The error for a database that failed its check: `integrity` when SQLite's check found damage, else unreadable. */
export function damagedDatabase(part: string, integrity: boolean, message: string): LdsError {
  return integrity ? damaged(part, `fails SQLite's integrity_check (${message.slice(0, 200)})`) : damaged(part, `is not a readable SQLite database (${message})`);
}

const damaged = (part: string, what: string) => archiveDamaged(`${part} ${what}`);

/** As archive/manifest.ts words an archive's damage (the same code, message and hint). */
function archiveDamaged(what: string, hint = "Nothing was changed. Use another archive, or make a new backup if the data volume is still intact."): LdsError {
  return new LdsError("archive_corrupt", `The archive is damaged: ${what}.`, { hint });
}
