import { createHash } from "node:crypto";
import type { OAuthState } from "../records.js";
import { NOW_TEXT } from "./schema-text.js";
import type { Sql } from "./sql.js";

// Only the state's SHA-256 is stored: the state itself goes to the browser alone.
const hashOf = (state: string) => createHash("sha256").update(state).digest("hex");

/** Remember a pending authorization for `ttlSeconds`; stale ones are swept out first. */
export async function createOAuthState(sql: Sql, state: string, pending: OAuthState, ttlSeconds: number): Promise<void> {
  await sql.run(`DELETE FROM oauth_states WHERE expires_at < ${NOW_TEXT}`);
  await sql.run("INSERT INTO oauth_states (state_hash, provider, team_id, verifier, redirect_uri, started_by, expires_at) VALUES ($1, $2, $3, $4, $5, $6, $7)", [
    hashOf(state),
    pending.provider,
    pending.teamId,
    pending.verifier,
    pending.redirectUri,
    pending.startedBy,
    new Date(Date.now() + ttlSeconds * 1000).toISOString(),
  ]);
}

interface StateRow {
  provider: string;
  team_id: number;
  verifier: string;
  redirect_uri: string;
  started_by: string;
  expires_at: string;
}

/**
 * The pending authorization of `state`, removed so that it can be used once; undefined when unknown or stale (a
 * stale one is removed too). One DELETE … RETURNING: of two callbacks taking the same state at once, on one replica
 * or two, the row goes to exactly one, the other waiting on its lock and then finding it gone.
 */
export async function takeOAuthState(sql: Sql, state: string): Promise<OAuthState | undefined> {
  const row = await sql.row<StateRow>("DELETE FROM oauth_states WHERE state_hash = $1 RETURNING provider, team_id, verifier, redirect_uri, started_by, expires_at", [hashOf(state)]);
  if (!row || Date.parse(row.expires_at) < Date.now()) return undefined;
  return { provider: row.provider, teamId: row.team_id, verifier: row.verifier, redirectUri: row.redirect_uri, startedBy: row.started_by };
}
