import type pg from "pg";
import { to as copyTo } from "pg-copy-streams";
import { LdsError } from "../../errors.js";
import { schemaVersionOf } from "../../store/postgres/migrate.js";
import { translateError } from "../../store/postgres/pool.js";
import { LATEST_SCHEMA_VERSION } from "../sqlite/migrations.js";
import type { RecordsTable } from "../sqlite/records-file-tables.js";
import { createRecordsFile, type RecordsFileWriter } from "../sqlite/records-file-writer.js";
import { openCopyConnection, type CopyConnection } from "./copy-connection.js";
import { CopyTextRows } from "./copy-text.js";
import { ENGINE_OWN_TABLES, ident, matchingColumns, POSTGRES_ONLY_TABLES, tablesOf, type PgTable } from "./records-catalog.js";

/** What an export copied: the schema version of the file, and the rows of each table. */
export interface ExportedRecords {
  version: number;
  rows: Record<string, number>;
}

/**
 * Copy the records of the database the pool serves (its current schema) into a new SQLite records file at `target`,
 * at the database's schema version, ids kept: the archive's db/ file, made from PostgreSQL. One REPEATABLE READ
 * READ ONLY transaction, so that the copy is one state of the database while replicas go on writing; each table
 * streams through `COPY (SELECT …) TO STDOUT` into the file's inserts, a chunk at a time (memory stays bounded
 * whatever a table's size). Sequential: the SQLite file has one writer, and it is the slower side (docs/postgresql.md).
 */
export async function exportRecords(pool: pg.Pool, target: string, options: { snapshot?: string } = {}): Promise<ExportedRecords> {
  const connection = await openCopyConnection(pool);
  let writer: RecordsFileWriter | undefined;
  try {
    const exported = await connection.transaction("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY", async () => {
      const { sql, endpoint } = connection;
      // Another transaction's snapshot (pg_export_snapshot), so that the records are the state the vectors were copied from.
      if (options.snapshot !== undefined) await sql.run(`SET TRANSACTION SNAPSHOT ${snapshotLiteral(options.snapshot)}`);
      // bytea as hex (`\x…`), whatever the server's default: the form the parser reads.
      await sql.run("SET LOCAL bytea_output = 'hex'");
      const schema = (await sql.row<{ schema: string }>("SELECT current_schema() AS schema"))!.schema;
      const tables = await tablesOf(sql, schema);
      const version = tables.has("schema_migrations") ? await schemaVersionOf(sql) : 0;
      const where = `The database at ${endpoint.host}:${endpoint.port} (schema ${schema})`;
      if (version === 0) {
        throw new LdsError("validation_error", `${where} holds no LDS records: it has no schema version.`, { hint: "Check the database URL; a database LDS serves has been opened by it once." });
      }
      if (version > LATEST_SCHEMA_VERSION) {
        throw new LdsError("schema_too_new", `${where} is at schema version ${version}; this LDS writes archives up to schema ${LATEST_SCHEMA_VERSION}.`, {
          hint: "Back it up with the LDS release that serves it (or a newer one); nothing was written.",
        });
      }
      const file = (writer = createRecordsFile(target, version));
      checkNothingLeftOut(tables, file.tables, where);
      const rows: Record<string, number> = {};
      for (const table of file.tables) {
        const columns = matchingColumns(table, tables.get(table.name), (why) => differs(where, version, why));
        rows[table.name] = await copyTable(connection, schema, table, columns, file);
      }
      return { version, rows };
    });
    // The snapshot is let go before the file is finished (its full-text rebuild takes seconds): the database is not
    // held idle in a transaction meanwhile, and a failure of either leaves no file (abort below).
    await connection.close();
    writer!.finish();
    return exported;
  } catch (err) {
    writer?.abort();
    throw err;
  } finally {
    await connection.close();
  }
}

/** An exported snapshot's id as a literal (SET TRANSACTION SNAPSHOT takes no parameter): only the form PostgreSQL gives one. */
function snapshotLiteral(id: string): string {
  if (!/^[0-9A-F]+-[0-9A-F]+(-[0-9]+)?$/i.test(id)) throw new Error(`"${id}" is not a snapshot id pg_export_snapshot gives`);
  return `'${id}'`;
}

/** Every PostgreSQL table has its place in the file, or is named as PostgreSQL's own: nothing is dropped unnoticed. */
function checkNothingLeftOut(tables: Map<string, PgTable>, copied: RecordsTable[], where: string): void {
  const left = [...tables.keys()].filter((name) => !ENGINE_OWN_TABLES.has(name) && !POSTGRES_ONLY_TABLES.has(name) && !copied.some((t) => t.name === name));
  if (left.length > 0) {
    throw new LdsError("internal_error", `${where} has tables a SQLite records file has no place for: ${left.join(", ")}. Nothing was written.`, {
      hint: "This LDS build's schemas disagree: report it (engine/postgres/records-catalog.ts names PostgreSQL's own tables).",
    });
  }
}

function differs(where: string, version: number, why: string): LdsError {
  return new LdsError("internal_error", `${where} and this LDS's SQLite schema ${version} do not match: ${why}. Nothing was written.`, {
    hint: "This LDS build's schemas disagree: report it.",
  });
}

/** A text field of COPY as the SQLite value of a column of this PostgreSQL type. */
function valueOf(type: string): (text: string | null) => unknown {
  const integer = (text: string) => {
    const value = Number(text);
    return Number.isSafeInteger(value) ? value : BigInt(text);
  };
  if (type === "bigint" || type === "integer" || type === "smallint") return (text) => (text === null ? null : integer(text));
  if (type === "double precision" || type === "real" || type.startsWith("numeric")) return (text) => (text === null ? null : Number(text));
  if (type === "boolean") return (text) => (text === null ? null : text === "t" ? 1 : 0);
  if (type === "bytea") return (text) => (text === null ? null : Buffer.from(text.slice(2), "hex"));
  return (text) => text;
}

/** One table's rows, streamed in key order from the transaction's snapshot into the file. Answers the rows copied. */
async function copyTable(connection: CopyConnection, schema: string, table: RecordsTable, columns: PgTable["columns"], writer: RecordsFileWriter): Promise<number> {
  const select = `SELECT ${columns.map((c) => ident(c.name)).join(", ")} FROM ${ident(schema)}.${ident(table.name)}${table.key.length > 0 ? ` ORDER BY ${table.key.map(ident).join(", ")}` : ""}`;
  const convert = columns.map((c) => valueOf(c.type));
  const parser = new CopyTextRows();
  let copied = 0;
  try {
    const stream = connection.client.query(copyTo(`COPY (${select}) TO STDOUT`));
    for await (const chunk of stream as AsyncIterable<Buffer>) {
      const rows = parser.push(chunk).map((fields) => {
        if (fields.length !== columns.length) throw new Error(`a row of ${table.name} has ${fields.length} fields, not ${columns.length}`);
        return fields.map((field, i) => convert[i]!(field));
      });
      writer.insert(table, rows);
      copied += rows.length;
    }
    parser.end();
  } catch (err) {
    throw translateError(err, connection.endpoint);
  }
  return copied;
}
