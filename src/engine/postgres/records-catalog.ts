import { LdsError } from "../../errors.js";
import type { Sql } from "../../store/postgres/sql.js";

/** A table of a PostgreSQL schema as its catalog describes it: columns in order, with their types. */
export interface PgTable {
  name: string;
  columns: Array<{ name: string; type: string; identity: boolean }>;
}

/**
 * Tables only the PostgreSQL engine has, which lds.db has no place for: skipped by copies between the engines.
 * `snippet_vectors` (schema 14): the snippets' embeddings, which an archive carries in vectors/vectors.db (copied by
 * a step of their own, not with the records); `request_windows` (schema 14): the rate limits' counts, which a restore
 * may forget (an UNLOGGED table, emptied by a crash anyway). A table of PostgreSQL that is neither in lds.db nor here stops a
 * copy rather than being dropped from it unnoticed.
 */
export const POSTGRES_ONLY_TABLES: ReadonlySet<string> = new Set(["snippet_vectors", "request_windows"]);

/** Tables each engine keeps for itself: the versions applied, recorded by each engine's own migrations. */
export const ENGINE_OWN_TABLES: ReadonlySet<string> = new Set(["schema_migrations"]);

/** The ordinary tables of `schema` with their columns, from pg_catalog. */
export async function tablesOf(sql: Sql, schema: string): Promise<Map<string, PgTable>> {
  const rows = await sql.rows<{ table: string; column: string; type: string; identity: boolean }>(
    `SELECT c.relname AS table, a.attname AS column, format_type(a.atttypid, a.atttypmod) AS type, a.attidentity <> '' AS identity
       FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace JOIN pg_attribute a ON a.attrelid = c.oid
      WHERE n.nspname = $1 AND c.relkind = 'r' AND a.attnum > 0 AND NOT a.attisdropped
      ORDER BY c.relname, a.attnum`,
    [schema],
  );
  const tables = new Map<string, PgTable>();
  for (const row of rows) {
    const table = tables.get(row.table) ?? { name: row.table, columns: [] };
    table.columns.push({ name: row.column, type: row.type, identity: row.identity });
    tables.set(row.table, table);
  }
  return tables;
}

/** Table names of `schema` ordered so that every table comes after the tables its foreign keys refer to. */
export async function referencedFirst(sql: Sql, schema: string, names: string[]): Promise<string[]> {
  const edges = await sql.rows<{ child: string; parent: string }>(
    `SELECT child.relname AS child, parent.relname AS parent
       FROM pg_constraint k JOIN pg_class child ON child.oid = k.conrelid JOIN pg_class parent ON parent.oid = k.confrelid
       JOIN pg_namespace n ON n.oid = child.relnamespace
      WHERE k.contype = 'f' AND n.nspname = $1 AND child.oid <> parent.oid`,
    [schema],
  );
  const ordered: string[] = [];
  const visiting = new Set<string>();
  const visit = (name: string) => {
    if (ordered.includes(name) || visiting.has(name)) return;
    visiting.add(name);
    for (const edge of edges) if (edge.child === name && names.includes(edge.parent)) visit(edge.parent);
    ordered.push(name);
  };
  for (const name of [...names].sort()) visit(name);
  return ordered;
}

/**
 * The PostgreSQL columns of an lds.db table, in lds.db's order: both schemas at one version have the same columns
 * (store/postgres/schema.ts promises it). Where they differ, a copy would lose or invent values: refused, naming them.
 */
export function matchingColumns(table: { name: string; columns: string[] }, pg: PgTable | undefined, refuse: (why: string) => LdsError): PgTable["columns"] {
  if (!pg) throw refuse(`table ${table.name} is missing from PostgreSQL`);
  const byName = new Map(pg.columns.map((c) => [c.name, c]));
  const missing = table.columns.filter((c) => !byName.has(c));
  const extra = pg.columns.filter((c) => !table.columns.includes(c.name)).map((c) => c.name);
  if (missing.length > 0 || extra.length > 0) {
    throw refuse(`table ${table.name} differs: ${[...missing.map((c) => `${c} only in the SQLite file`), ...extra.map((c) => `${c} only in PostgreSQL`)].join(", ")}`);
  }
  return table.columns.map((c) => byName.get(c)!);
}

/** A schema (or any identifier) quoted for SQL. */
export const ident = (name: string) => `"${name.replace(/"/g, '""')}"`;
