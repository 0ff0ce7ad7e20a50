import { LdsError } from "../../errors.js";
import { action } from "../../hints.js";
import type { AccessPolicy, Plan, Team } from "../records.js";
import type { Sql } from "./sql.js";
import { isUniqueViolation } from "./unique-violation.js";

const SELECT_TEAM = "SELECT id, name, plan FROM teams";

export async function createTeam(sql: Sql, name: string, plan: Plan): Promise<Team> {
  try {
    return (await sql.row<Team>("INSERT INTO teams (name, plan) VALUES ($1, $2) RETURNING id, name, plan", [name, plan]))!;
  } catch (err) {
    if (isUniqueViolation(err)) throw new LdsError("validation_error", `A team named ${name} already exists.`);
    throw err;
  }
}

/** By name, or by numeric id (a name wins over an id that reads the same). */
export async function findTeam(sql: Sql, nameOrId: string): Promise<Team | undefined> {
  const byName = await sql.row<Team>(`${SELECT_TEAM} WHERE name = $1`, [nameOrId]);
  // A number too long for an id names no team (and would overflow the column's type in the query).
  if (byName || !/^\d{1,15}$/.test(nameOrId)) return byName;
  return sql.row<Team>(`${SELECT_TEAM} WHERE id = $1`, [Number(nameOrId)]);
}

export async function requireTeam(sql: Sql, nameOrId: string): Promise<Team> {
  const team = await findTeam(sql, nameOrId);
  if (!team) throw new LdsError("team_not_found", `No team ${nameOrId}.`, { hint: `List them: ${action("team.list")}.` });
  return team;
}

export async function listTeams(sql: Sql): Promise<Team[]> {
  // COLLATE "C": byte order, as SQLite sorts text, whatever the database's locale.
  return sql.rows<Team>(`${SELECT_TEAM} ORDER BY name COLLATE "C"`);
}

export async function setTeamPlan(sql: Sql, team: Team, plan: Plan): Promise<void> {
  await sql.run("UPDATE teams SET plan = $1 WHERE id = $2", [plan, team.id]);
}

/** A team's access policy; null when it has none (everything is allowed). Stored as JSON text, as in lds.db. */
export async function teamPolicy(sql: Sql, teamId: number): Promise<AccessPolicy | null> {
  const stored = (await sql.row<{ policy: string | null }>("SELECT policy FROM teams WHERE id = $1", [teamId]))?.policy;
  return stored ? (JSON.parse(stored) as AccessPolicy) : null;
}

/** Replace a team's access policy (null: none). */
export async function setTeamPolicy(sql: Sql, teamId: number, policy: AccessPolicy | null): Promise<void> {
  await sql.run("UPDATE teams SET policy = $1 WHERE id = $2", [policy === null ? null : JSON.stringify(policy), teamId]);
}

/** Record a team's project; adding it again renames it. */
export async function addTeamProject(sql: Sql, teamId: number, projectId: string, name: string): Promise<void> {
  await sql.run("INSERT INTO team_projects (team_id, project_id, name) VALUES ($1, $2, $3) ON CONFLICT (team_id, project_id) DO UPDATE SET name = excluded.name", [teamId, projectId, name]);
}

export async function teamHasProject(sql: Sql, teamId: number, projectId: string): Promise<boolean> {
  return (await sql.row("SELECT 1 FROM team_projects WHERE team_id = $1 AND project_id = $2", [teamId, projectId])) !== undefined;
}
