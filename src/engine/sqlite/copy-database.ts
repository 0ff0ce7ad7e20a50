import fs from "node:fs";
import Database from "better-sqlite3";
import { LdsError, fromSystemError } from "../../errors.js";
import { loadVectorExtension } from "../../index/sqlite/vector-index.js";
import { zeroFreePages } from "./free-pages.js";

/** Larger than any database's page count: the whole copy happens in one step of the backup API. */
const ALL_PAGES = 0x7fffffff;

/**
 * Copy a live database into `destination` (a new file): SQLite's backup API in a single step, i.e. page by page
 * inside one read transaction, so the copy is one consistent state and writers are not blocked (WAL). A backup
 * taken in many small steps restarts whenever another connection writes and may never finish under load
 * (DESIGN §6); one step cannot be restarted. It copies pages as they are, which is 1.5-2x faster than rebuilding
 * every b-tree with VACUUM INTO (docs/benchmarks.md), so the copy is then made what an archive holds: journal
 * mode DELETE (no -wal is archived) and free pages zeroed, so that content deleted from the volume does not
 * travel in its archives. Archived with mode 0600: the databases hold credentials' seals, like the key.
 * `onPinned` is called once the copy's state is fixed (its read transaction has begun), before the pages are copied:
 * a backup starts copying lds.db then, beside this copy, and lds.db's state is still the later one.
 */
export async function copyDatabase(source: string, destination: string, needsVectorExtension: boolean, onPinned?: () => void): Promise<void> {
  let db: Database.Database | undefined;
  try {
    db = new Database(source, { readonly: true, fileMustExist: true });
    db.pragma("busy_timeout = 10000");
    // Every page passes through once: a large page cache only adds to the backup's peak memory.
    db.pragma("cache_size = -2048");
    if (needsVectorExtension) loadVectorExtension(db);
    // A WAL reader's state is taken at its transaction's first read; the backup API then copies within that
    // transaction instead of opening its own.
    db.exec("BEGIN");
    db.prepare("SELECT count(*) FROM sqlite_schema").get();
    onPinned?.();
    // better-sqlite3 calls the callback after its first (empty) step; what it returns is the next step's size.
    await db.backup(destination, { progress: () => ALL_PAGES });
    db.exec("COMMIT");
  } catch (err) {
    if (err instanceof LdsError) throw err;
    if (DAMAGED.has((err as { code?: string }).code ?? "")) throw damagedSource(source, (err as Error).message);
    throw fromSystemError(err, `the snapshot of ${source}`);
  } finally {
    db?.close();
  }
  const copy = new Database(destination, { fileMustExist: true });
  try {
    // A staged copy needs no durability (a crash discards it; the archive is fsynced): no flush for the switch.
    copy.pragma("synchronous = OFF");
    copy.pragma("journal_mode = DELETE");
  } finally {
    copy.close();
  }
  zeroFreePages(destination);
  fs.chmodSync(destination, 0o600);
}

/** SQLite's answers for a file that is not (or no longer) a whole database: "file is not a database", "malformed". */
const DAMAGED = new Set(["SQLITE_NOTADB", "SQLITE_CORRUPT"]);

/** A live database that cannot be read whole would make an archive that cannot be restored: say so, and what to do. */
function damagedSource(source: string, reason: string): LdsError {
  return new LdsError("data_dir_invalid", `${source} is damaged (${reason}); no archive was written.`, {
    hint: `Keep the archives you have (do not prune them). Check the file with: sqlite3 ${source} "PRAGMA integrity_check"; then restore the newest archive that verifies (lds verify ARCHIVE, then lds-restore ARCHIVE --yes).`,
  });
}
