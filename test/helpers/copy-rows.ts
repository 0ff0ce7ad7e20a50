import Database from "better-sqlite3";
import pg from "pg";

/** Rows of lds.db's tables, copied column for column into a PostgreSQL database at the same schema (as a cross-restore will). */
export async function copyRowsToPostgres(sqliteFile: string, url: string, tables: string[]): Promise<void> {
  const sqlite = new Database(sqliteFile, { readonly: true });
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    for (const table of tables) {
      for (const row of sqlite.prepare(`SELECT * FROM ${table}`).all() as Array<Record<string, unknown>>) {
        const columns = Object.keys(row);
        await client.query(`INSERT INTO ${table} (${columns.join(", ")}) VALUES (${columns.map((_, i) => `$${i + 1}`).join(", ")})`, Object.values(row));
      }
    }
  } finally {
    await client.end();
    sqlite.close();
  }
}
