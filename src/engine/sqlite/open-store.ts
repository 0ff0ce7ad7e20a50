import Database from "better-sqlite3";
import { fromSystemError } from "../../errors.js";
import { MMAP_BYTES } from "../../store/sqlite/mapped-reads.js";
import { migrate } from "./migrate.js";

export interface OpenStoreOptions {
  /** Apply migrations at open. @default true */
  migrate?: boolean;
  readonly?: boolean;
  /**
   * Read through a memory map (the server: searches read large parts of the full-text index). Mapped pages count in
   * the process's RSS as they are touched, so a command that writes a large library (`lds ingest git`) reads
   * through SQLite's bounded page cache instead. @default false
   */
  mappedReads?: boolean;
}

/** Open lds.db in WAL mode with foreign keys on, and migrate it to the newest schema. */
export function openStore(file: string, options: OpenStoreOptions = {}): Database.Database {
  let db: Database.Database;
  try {
    db = new Database(file, { readonly: options.readonly ?? false, fileMustExist: options.readonly ?? false });
  } catch (err) {
    throw fromSystemError(err, file);
  }
  try {
    db.pragma("busy_timeout = 5000");
    if (!options.readonly) {
      db.pragma("journal_mode = WAL");
      db.pragma("synchronous = NORMAL");
      // What a delete frees within a page is zeroed when that costs no extra write: backups copy pages as they
      // are (snapshot/copy-database.ts, which zeroes the free pages), and deleted text should not travel in them.
      db.pragma("secure_delete = FAST");
    }
    db.pragma("foreign_keys = ON");
    // Searches read large parts of the full-text index: mapped pages are read without a copy into SQLite's page
    // cache (BM25 over 100,000 snippets: 26 → 20 ms). The OS decides what stays resident, but what is resident
    // counts in RSS: an ingestion's peak grew with its library (139 → 169 MiB at twice the size), 137 → 139 without.
    if (options.mappedReads) db.pragma(`mmap_size = ${MMAP_BYTES}`);
    if (options.migrate ?? !options.readonly) migrate(db);
    return db;
  } catch (err) {
    db.close();
    throw err;
  }
}
