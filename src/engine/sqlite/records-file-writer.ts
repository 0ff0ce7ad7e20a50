import fs from "node:fs";
import Database from "better-sqlite3";
import { LdsError, fromSystemError } from "../../errors.js";
import { migrate } from "./migrate.js";
import { LATEST_SCHEMA_VERSION, MIGRATIONS } from "./migrations.js";
import { quoted, recordsTables, type RecordsTable } from "./records-file-tables.js";

/** Rows per transaction of a bulk load: large enough that commits cost nothing, small enough to bound the journal. */
const ROWS_PER_TRANSACTION = 50_000;

/** A fresh lds.db being filled with another engine's rows, table by table. */
export interface RecordsFileWriter {
  readonly version: number;
  /** The tables whose rows are to be copied in, with their columns (from the file's own catalog). */
  readonly tables: RecordsTable[];
  /** Rows of `table`, each with its `columns` in order; the key's values (ids) are kept. */
  insert(table: RecordsTable, rows: unknown[][]): void;
  /** Commit, rebuild the full-text index from the snippets, and close: the file is then a whole lds.db. */
  finish(): void;
  /** Close and remove the file: a half-filled copy is never left behind. */
  abort(): void;
}

/**
 * Create an empty lds.db at schema `version` with this build's own migrations (so that it is exactly what a SQLite
 * volume at that version holds), ready for a bulk load. The file must not exist. Triggers are set aside during the
 * load and created again after it: the rows copied in already hold whatever a trigger would derive, except the
 * full-text index, which is rebuilt from the snippets in one pass (faster than a trigger per row: docs/postgresql.md).
 */
export function createRecordsFile(file: string, version: number): RecordsFileWriter {
  if (!Number.isInteger(version) || version < 1 || version > LATEST_SCHEMA_VERSION) {
    throw new LdsError("schema_too_new", `Records at schema version ${version} cannot be written to a SQLite file: this LDS's SQLite migrations reach ${LATEST_SCHEMA_VERSION}.`, {
      hint: "Use the LDS release that wrote the database (or a newer one); nothing was written.",
    });
  }
  let db: Database.Database;
  try {
    // Made empty with mode 0600 first (and only if absent): the rows it receives (sealed secrets, digests of keys and
    // sessions) are never readable by other local users, not even while it is filled.
    fs.writeFileSync(file, "", { mode: 0o600, flag: "wx" });
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "EEXIST")
      throw new LdsError("validation_error", `${file} already exists: a copy of the records is written to a new file only.`, { hint: "Choose a path that does not exist yet." });
    throw fromSystemError(err, file);
  }
  try {
    db = new Database(file);
  } catch (err) {
    fs.rmSync(file, { force: true });
    throw fromSystemError(err, file);
  }
  const remove = () => {
    if (db.open) db.close();
    for (const suffix of ["", "-journal", "-wal", "-shm"]) fs.rmSync(file + suffix, { force: true });
  };
  try {
    migrate(db, MIGRATIONS, version);
    // A file being filled needs no durability: a crash or failure removes it, and finish() leaves it whole.
    db.pragma("journal_mode = OFF");
    db.pragma("synchronous = OFF");
    // Tables load in any order (a parent's rows may come after its children's); the references are checked whole
    // once every row is in (finish).
    db.pragma("foreign_keys = OFF");
    const triggers = db.prepare("SELECT name, sql FROM sqlite_schema WHERE type = 'trigger' ORDER BY name").all() as Array<{ name: string; sql: string }>;
    for (const trigger of triggers) db.exec(`DROP TRIGGER ${quoted(trigger.name)}`);
    const tables = recordsTables(db);
    const statements = new Map<string, Database.Statement>();
    let pending = 0;
    db.exec("BEGIN");
    return {
      version,
      tables,
      insert(table, rows) {
        let statement = statements.get(table.name);
        if (!statement) {
          statement = db.prepare(`INSERT INTO ${quoted(table.name)} (${table.columns.map(quoted).join(", ")}) VALUES (${table.columns.map(() => "?").join(", ")})`);
          statements.set(table.name, statement);
        }
        for (const row of rows) statement.run(row);
        pending += rows.length;
        if (pending >= ROWS_PER_TRANSACTION) {
          db.exec("COMMIT; BEGIN");
          pending = 0;
        }
      },
      finish() {
        try {
          db.exec("COMMIT");
          checkReferences(db, file);
          rebuildFullText(db);
          for (const trigger of triggers) db.exec(trigger.sql);
          // What an archive holds: one file, no journal beside it (as snapshots make it: copy-database.ts).
          db.pragma("journal_mode = DELETE");
          db.close();
          fs.chmodSync(file, 0o600);
        } catch (err) {
          remove();
          throw fromSystemError(err, file);
        }
      },
      abort: remove,
    };
  } catch (err) {
    remove();
    throw fromSystemError(err, file);
  }
}

/** Every row's references resolve: the copy is as whole as the database it came from. */
function checkReferences(db: Database.Database, file: string): void {
  const broken = db.pragma("foreign_key_check") as Array<{ table: string; parent: string }>;
  if (broken.length > 0) {
    const first = broken[0]!;
    throw new LdsError("internal_error", `The copy of the records in ${file} has ${broken.length} rows whose references do not resolve (first: ${first.table} → ${first.parent}); it was removed.`, {
      hint: "The source database lacks rows its records refer to: check it, then try again.",
    });
  }
}

/** Every FTS5 table rebuilt from its content table (lds.db's snippets_fts from snippets). */
function rebuildFullText(db: Database.Database): void {
  const virtual = db.prepare("SELECT name FROM sqlite_schema WHERE type = 'table' AND sql LIKE 'CREATE VIRTUAL TABLE%USING fts5%'").pluck().all() as string[];
  for (const name of virtual) db.prepare(`INSERT INTO ${quoted(name)} (${quoted(name)}) VALUES ('rebuild')`).run();
}
