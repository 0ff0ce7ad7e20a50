import fs from "node:fs";
import path from "node:path";
import Database from "better-sqlite3";
import { LdsError } from "../errors.js";
import { KEY_BYTES } from "../secrets/seal.js";
import { keyMismatch } from "../store/key-match.js";
import { schemaVersion } from "../store/migrate.js";
import { loadVectorExtension } from "../index/sqlite/vector-index.js";
import { ARCHIVE_FILES, archiveDamaged, type Manifest } from "./manifest.js";
import { checkStoredTables, expectOk, IntegrityProblem, openForCheck } from "./database-checks.js";

export interface CheckResult {
  part: string;
  ok: true;
  detail: string;
}

export interface CheckOptions {
  /**
   * lds.db's virtual tables (its full-text index) were checked on another thread (checkVirtualTablesInThread)
   * while the rest of the archive streamed: check everything else here.
   */
  virtualTablesCheckedElsewhere?: boolean;
}

/**
 * Check extracted snapshots beyond their checksums: a checksum proves the bytes are the ones written at backup
 * time, these checks prove those bytes are usable databases and a usable key.
 */
export function checkExtractedSnapshot(dir: string, manifest: Manifest, options: CheckOptions = {}): CheckResult[] {
  const at = (rel: string) => path.join(dir, rel);
  const keySize = fs.statSync(at(ARCHIVE_FILES.key)).size;
  if (keySize !== KEY_BYTES) throw damaged(ARCHIVE_FILES.key, `is ${keySize} bytes, a key is ${KEY_BYTES}`);

  const dbVersion = checkDatabase(at(ARCHIVE_FILES.db), ARCHIVE_FILES.db, { vectors: false, virtualTables: !options.virtualTablesCheckedElsewhere });
  if (dbVersion !== manifest.schemaVersion) {
    throw damaged(ARCHIVE_FILES.db, `has schema version ${dbVersion}, the manifest says ${manifest.schemaVersion}`);
  }
  checkDatabase(at(ARCHIVE_FILES.vectors), ARCHIVE_FILES.vectors, { vectors: true, virtualTables: true });
  const mismatch = withDatabase(at(ARCHIVE_FILES.db), (db) => keyMismatch(db, fs.readFileSync(at(ARCHIVE_FILES.key))));
  if (mismatch) {
    throw archiveDamaged(
      `${ARCHIVE_FILES.key} is not the key ${ARCHIVE_FILES.db} was sealed with (${mismatch}); a server could not start on it`,
      "Nothing was changed. Use another archive (made by 0.4 or later, which checks this when it writes one).",
    );
  }
  return [
    { part: ARCHIVE_FILES.db, ok: true, detail: `integrity_check ok, schema version ${dbVersion}` },
    { part: ARCHIVE_FILES.vectors, ok: true, detail: "integrity_check ok, vector table readable" },
    { part: ARCHIVE_FILES.key, ok: true, detail: `${KEY_BYTES} bytes, the key the database was sealed with` },
  ];
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
