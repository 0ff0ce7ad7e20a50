import { seal, unseal } from "../../secrets/seal.js";
import { NOW_TEXT } from "./schema-text.js";
import type { Sql } from "./sql.js";

/**
 * The account groups' sealed tokens, in the secrets table, sealed as the SQLite engine seals them: the name is
 * bound into the seal, so that a value cannot be moved to another name.
 */
export async function putSecret(sql: Sql, key: Buffer, name: string, value: string): Promise<void> {
  await sql.run(`INSERT INTO secrets (name, sealed) VALUES ($1, $2) ON CONFLICT (name) DO UPDATE SET sealed = excluded.sealed, updated_at = ${NOW_TEXT}`, [name, seal(key, value, name)]);
}

export async function getSecret(sql: Sql, key: Buffer, name: string): Promise<string | undefined> {
  const row = await sql.row<{ sealed: string }>("SELECT sealed FROM secrets WHERE name = $1", [name]);
  return row === undefined ? undefined : unseal(key, row.sealed, name);
}

export async function deleteSecret(sql: Sql, name: string): Promise<void> {
  await sql.run("DELETE FROM secrets WHERE name = $1", [name]);
}
