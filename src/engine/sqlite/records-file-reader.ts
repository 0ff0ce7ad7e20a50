import fs from "node:fs";
import { LdsError, fromSystemError } from "../../errors.js";
import { LATEST_SCHEMA_VERSION } from "./migrations.js";
import { quoted, recordsTables, type RecordsTable } from "./records-file-tables.js";
import { schemaVersion } from "./migrate.js";
import { openReadOnly } from "./open-read-only.js";

/** An lds.db opened to copy its rows into another engine. */
export interface RecordsFileReader {
  readonly version: number;
  readonly tables: RecordsTable[];
  /** The table's rows, its columns in order, by key (ids ascending), one at a time: never the whole table at once. */
  rows(table: RecordsTable): IterableIterator<unknown[]>;
  close(): void;
}

/** SQLite's answers for a file that is not (or no longer) a whole database. */
const DAMAGED = new Set(["SQLITE_NOTADB", "SQLITE_CORRUPT"]);

/**
 * Open an lds.db read-only to copy its records: a file that is not a SQLite database, or one that LDS did not make
 * (no schema version, no records' tables), is archive_corrupt; a schema newer than this build's is schema_too_new.
 */
export function openRecordsFile(file: string): RecordsFileReader {
  if (!fs.existsSync(file)) throw new LdsError("path_not_found", `${file} does not exist.`, { hint: "Give the path of an LDS records database (an archive's db/lds.db)." });
  const db = openReadOnly(file);
  try {
    const version = schemaVersion(db);
    const recorded = db.prepare("SELECT max(version) FROM schema_migrations").pluck().get() as number | null;
    if (version < 1 || recorded !== version) throw notRecords(file, "it has no LDS schema version");
    if (version > LATEST_SCHEMA_VERSION) {
      throw new LdsError("schema_too_new", `${file} is at schema version ${version}; this LDS knows versions up to ${LATEST_SCHEMA_VERSION}.`, {
        hint: "Use the LDS release that wrote it (or a newer one); nothing was changed.",
      });
    }
    const tables = recordsTables(db);
    if (!tables.some((t) => t.name === "libraries") || !tables.some((t) => t.name === "snippets")) throw notRecords(file, "it has no libraries and snippets tables");
    return {
      version,
      tables,
      rows: (table) =>
        db
          .prepare(`SELECT ${table.columns.map(quoted).join(", ")} FROM ${quoted(table.name)} ORDER BY ${table.key.map(quoted).join(", ") || "rowid"}`)
          .raw()
          .iterate() as IterableIterator<unknown[]>,
      close: () => db.close(),
    };
  } catch (err) {
    db.close();
    if (err instanceof LdsError) throw err;
    const code = (err as { code?: string }).code ?? "";
    if (DAMAGED.has(code)) throw notRecords(file, "it is not a whole SQLite database");
    if (code === "SQLITE_ERROR" && /no such table: schema_migrations/.test((err as Error).message)) throw notRecords(file, "it has no schema_migrations table");
    throw fromSystemError(err, file);
  }
}

function notRecords(file: string, why: string): LdsError {
  return new LdsError("archive_corrupt", `${file} is not an LDS records database (lds.db): ${why}.`, {
    hint: "Give the db/lds.db of an LDS archive (or a volume's lds.db); nothing was changed.",
  });
}
