import { deleteSecret } from "./settings.js";
import type { Sql } from "./sql.js";

/** Where a grant's tokens are sealed (secrets), by grant: the names lds.db uses. */
export const accessName = (grantId: number) => `oauth:${grantId}:access`;
export const refreshName = (grantId: number) => `oauth:${grantId}:refresh`;

/**
 * Hold the team's row until the transaction ends, so that changes of one team's connections (a pasted token, a
 * grant) follow one another, as SQLite's one writer makes them: two replicas replacing a team's git connection at
 * once would otherwise each delete none and both insert one. NO KEY UPDATE: rows that merely reference the team
 * (users, libraries) are still written meanwhile.
 */
export async function lockTeamConnections(tx: Sql, teamId: number): Promise<void> {
  await tx.run("SELECT 1 FROM teams WHERE id = $1 FOR NO KEY UPDATE", [teamId]);
}

/** Remove the connections a new one replaces (a pasted one with its token; a grant's go with the grant). */
export async function dropConnections(tx: Sql, where: string, values: unknown[]): Promise<void> {
  const rows = await tx.rows<{ secret_name: string; grant_id: number | null }>(`DELETE FROM connections WHERE ${where} RETURNING secret_name, grant_id`, values);
  for (const row of rows) if (row.grant_id === null) await deleteSecret(tx, row.secret_name);
}

/** A grant none of whose connections is left (all replaced) is deleted with its tokens. */
export async function dropOrphanGrants(tx: Sql): Promise<void> {
  const rows = await tx.rows<{ id: number }>("SELECT id FROM oauth_grants g WHERE NOT EXISTS (SELECT 1 FROM connections c WHERE c.grant_id = g.id) ORDER BY id");
  for (const { id } of rows) await removeGrantRows(tx, id);
}

/**
 * A grant, its connections and its sealed tokens. The grant's row goes first: every transaction that changes a grant
 * locks its row before its secrets (updateTokens too), so that two of them never wait on each other in a circle.
 */
export async function removeGrantRows(tx: Sql, grantId: number): Promise<void> {
  await tx.run("DELETE FROM oauth_grants WHERE id = $1", [grantId]);
  await tx.run("DELETE FROM connections WHERE grant_id = $1", [grantId]);
  await deleteSecret(tx, accessName(grantId));
  await deleteSecret(tx, refreshName(grantId));
}
