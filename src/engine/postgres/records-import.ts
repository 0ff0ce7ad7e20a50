import { once } from "node:events";
import type pg from "pg";
import { from as copyFrom } from "pg-copy-streams";
import { LdsError } from "../../errors.js";
import { applyMigrations } from "../../store/postgres/migrate.js";
import { translateError } from "../../store/postgres/pool.js";
import { POSTGRES_MIGRATIONS, POSTGRES_SCHEMA_VERSION } from "../../store/postgres/schema.js";
import type { RecordsTable } from "../sqlite/records-file-tables.js";
import { openRecordsFile, type RecordsFileReader } from "../sqlite/records-file-reader.js";
import { openCopyConnection, type CopyConnection } from "./copy-connection.js";
import { copyTextLine } from "./copy-text.js";
import { ENGINE_OWN_TABLES, ident, matchingColumns, POSTGRES_ONLY_TABLES, referencedFirst, tablesOf } from "./records-catalog.js";
import { restoredSchemaName } from "./schema-names.js";

/** Rows written to a COPY stream at once: large enough to amortize the writes, small enough to bound memory. */
const ROWS_PER_WRITE = 1_000;

/** Where an import put the records: the new schema, and the rows of each table. */
export interface ImportedRecords {
  schema: string;
  rows: Record<string, number>;
}

export interface ImportOptions {
  now?: Date;
  /**
   * More work in the import's transaction, once the tables are filled (a restore's vectors and key fingerprint): it
   * commits with them or not at all.
   */
  alsoInTransaction?: (connection: CopyConnection, schema: string) => Promise<void>;
}

/**
 * Copy the records of a SQLite records file (an archive's db/ file) into a new PostgreSQL schema,
 * `lds_restore_<UTC time>`, made with the PostgreSQL schema at the file's version: every table through
 * `COPY … FROM STDIN`, ids kept, then each identity moved past the largest id copied, so that new rows never take
 * a copied id. One transaction: a failure leaves nothing behind. The live schema is not touched
 * (swapInRestoredSchema puts the new one in its place). The file must be at a version the PostgreSQL schema has:
 * an older one is migrated first (as a restore migrates its staged copy).
 */
export async function importRecords(sourceSqliteFile: string, pool: pg.Pool, options: ImportOptions = {}): Promise<ImportedRecords> {
  const reader = openRecordsFile(sourceSqliteFile);
  try {
    const migrations = POSTGRES_MIGRATIONS.filter((m) => m.version <= reader.version);
    if (migrations.at(-1)?.version !== reader.version) {
      // Newer than this build's PostgreSQL schema: as a database written by a newer LDS. Older: not migrated yet.
      throw new LdsError(
        reader.version > POSTGRES_SCHEMA_VERSION ? "schema_too_new" : "validation_error",
        `${sourceSqliteFile} is at schema version ${reader.version}; this LDS's PostgreSQL schema has versions ${POSTGRES_MIGRATIONS.map((m) => m.version).join(", ")}. Nothing was changed.`,
        {
          hint: reader.version > POSTGRES_SCHEMA_VERSION ? "Use the LDS release that wrote it (or a newer one)." : "Open it with this LDS first (it migrates the file), then import it.",
        },
      );
    }
    const schema = restoredSchemaName(options.now);
    const connection = await openCopyConnection(pool);
    try {
      return await connection.transaction("BEGIN", async () => {
        const imported = await importInto(connection, schema, reader, sourceSqliteFile);
        await options.alsoInTransaction?.(connection, schema);
        return imported;
      });
    } finally {
      await connection.close();
    }
  } finally {
    reader.close();
  }
}

async function importInto(connection: CopyConnection, schema: string, reader: RecordsFileReader, file: string): Promise<ImportedRecords> {
  const { sql, endpoint } = connection;
  const taken = () =>
    new LdsError("validation_error", `The schema ${schema} already exists at ${endpoint.host}:${endpoint.port}: another restore made it this second. Nothing was changed.`, {
      hint: "Run the restore again in a moment.",
    });
  if (await sql.row("SELECT 1 FROM pg_namespace WHERE nspname = $1", [schema])) throw taken();
  try {
    await sql.run(`CREATE SCHEMA ${ident(schema)}`);
  } catch (err) {
    // Two restores in one second both pass the check above; the second's CREATE then fails (42P06, duplicate_schema).
    if ((err as { code?: string }).code === "42P06") throw taken();
    throw err;
  }
  // The schema's DDL names its tables unqualified: within this transaction they are created in (and found in) the new schema.
  await sql.run(`SET LOCAL search_path TO ${ident(schema)}`);
  await applyMigrations(sql, 0, reader.version);
  const tables = await tablesOf(sql, schema);
  const refuse = (why: string) =>
    new LdsError("archive_corrupt", `${file} does not have the tables of LDS schema ${reader.version}: ${why}. Nothing was changed.`, {
      hint: "Restore from another archive, or verify this one first (it names what is damaged).",
    });
  const columns = new Map(reader.tables.map((t) => [t.name, matchingColumns(t, tables.get(t.name), refuse)]));
  const unfilled = [...tables.keys()].filter((name) => !columns.has(name) && !ENGINE_OWN_TABLES.has(name) && !POSTGRES_ONLY_TABLES.has(name));
  if (unfilled.length > 0) throw refuse(`it has no table ${unfilled.join(", ")}`);
  const rows: Record<string, number> = {};
  for (const name of await referencedFirst(sql, schema, [...columns.keys()])) {
    const table = reader.tables.find((t) => t.name === name)!;
    rows[name] = await copyTable(connection, schema, table, reader);
    for (const column of columns.get(name)!.filter((c) => c.identity)) {
      // The next id is past the largest copied (a table left empty starts at 1, as a new one does).
      await sql.run(`SELECT setval(pg_get_serial_sequence($1, $2), max_id) FROM (SELECT max(${ident(column.name)}) AS max_id FROM ${ident(schema)}.${ident(name)}) m WHERE max_id IS NOT NULL`, [
        `${ident(schema)}.${ident(name)}`,
        column.name,
      ]);
    }
    // The planner's statistics of the new tables, before they serve.
    await sql.run(`ANALYZE ${ident(schema)}.${ident(name)}`);
  }
  return { schema, rows };
}

/** One table's rows, from the file in key order into `COPY … FROM STDIN`, a bounded number at a time. */
async function copyTable(connection: CopyConnection, schema: string, table: RecordsTable, reader: RecordsFileReader): Promise<number> {
  const stream = connection.client.query(copyFrom(`COPY ${ident(schema)}.${ident(table.name)} (${table.columns.map(ident).join(", ")}) FROM STDIN`));
  // The first failure, kept: PostgreSQL may refuse a row while later ones are still being written.
  let failure: unknown;
  stream.on("error", (err) => (failure ??= err));
  const finished = new Promise<void>((resolve, reject) => {
    stream.on("finish", resolve);
    stream.on("error", reject);
  });
  finished.catch(() => {});
  const write = async (text: string) => {
    if (failure) throw failure;
    if (!stream.write(text)) await Promise.race([once(stream, "drain"), finished]);
  };
  let copied = 0;
  try {
    let lines: string[] = [];
    for (const row of reader.rows(table)) {
      lines.push(copyTextLine(row));
      copied++;
      if (lines.length >= ROWS_PER_WRITE) {
        await write(lines.join(""));
        lines = [];
      }
    }
    if (lines.length > 0) await write(lines.join(""));
    stream.end();
    await finished;
  } catch (err) {
    stream.destroy();
    await finished.catch(() => {});
    throw describeCopyFailure(err, table, connection.endpoint);
  }
  return copied;
}

/** A row PostgreSQL refuses (a type, a constraint) names its table; a lost connection is database_unreachable. */
function describeCopyFailure(err: unknown, table: RecordsTable, endpoint: { host: string; port: number }): unknown {
  const translated = translateError(err, endpoint);
  if (translated !== err || err instanceof LdsError || !(err as { code?: string }).code) return translated;
  return new LdsError("archive_corrupt", `A row of ${table.name} cannot be copied into PostgreSQL: ${(err as Error).message}. Nothing was changed.`, {
    cause: err,
    hint: "Restore from another archive, or verify this one first (it names what is damaged).",
  });
}
