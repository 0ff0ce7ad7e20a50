import type Database from "better-sqlite3";
import { LdsError } from "../../errors.js";
import { action } from "../../hints.js";
import type { AccessPolicy, Plan, Role, Team, User } from "../records.js";

export function createTeam(db: Database.Database, name: string, plan: Plan): Team {
  try {
    const id = Number(db.prepare("INSERT INTO teams (name, plan) VALUES (?, ?)").run(name, plan).lastInsertRowid);
    return findTeam(db, String(id))!;
  } catch (err) {
    if ((err as { code?: string }).code === "SQLITE_CONSTRAINT_UNIQUE") throw new LdsError("validation_error", `A team named ${name} already exists.`);
    throw err;
  }
}

/** By name, or by numeric id. */
export function findTeam(db: Database.Database, nameOrId: string): Team | undefined {
  const select = "SELECT id, name, plan FROM teams WHERE ";
  const byName = db.prepare(select + "name = ?").get(nameOrId) as Team | undefined;
  if (byName || !/^\d+$/.test(nameOrId)) return byName;
  return db.prepare(select + "id = ?").get(Number(nameOrId)) as Team | undefined;
}

export function requireTeam(db: Database.Database, nameOrId: string): Team {
  const team = findTeam(db, nameOrId);
  if (!team) throw new LdsError("team_not_found", `No team ${nameOrId}.`, { hint: `List them: ${action("team.list")}.` });
  return team;
}

export function listTeams(db: Database.Database): Team[] {
  return db.prepare("SELECT id, name, plan FROM teams ORDER BY name").all() as Team[];
}

export function setTeamPlan(db: Database.Database, team: Team, plan: Plan): void {
  db.prepare("UPDATE teams SET plan = ? WHERE id = ?").run(plan, team.id);
}

export function addUser(db: Database.Database, team: Team, email: string, role: Role): User {
  if (!/^[^@\s]+@[^@\s]+$/.test(email)) throw new LdsError("validation_error", `"${email}" is not an email address.`);
  // A removed user comes back with the team and role given now (and its old keys work again).
  const removed = db.prepare("SELECT id FROM users WHERE email = ? AND removed_at IS NOT NULL").pluck().get(email) as number | undefined;
  if (removed !== undefined) {
    db.prepare("UPDATE users SET team_id = ?, role = ?, removed_at = NULL WHERE id = ?").run(team.id, role, removed);
    return { id: removed, teamId: team.id, email, role };
  }
  try {
    const id = Number(db.prepare("INSERT INTO users (team_id, email, role) VALUES (?, ?, ?)").run(team.id, email, role).lastInsertRowid);
    return { id, teamId: team.id, email, role };
  } catch (err) {
    if ((err as { code?: string }).code === "SQLITE_CONSTRAINT_UNIQUE") throw new LdsError("validation_error", `A user ${email} already exists.`);
    throw err;
  }
}

export function requireUser(db: Database.Database, email: string): User {
  const user = db.prepare("SELECT id, team_id AS teamId, email, role FROM users WHERE email = ? AND removed_at IS NULL").get(email) as User | undefined;
  if (!user) throw new LdsError("user_not_found", `No user ${email}.`, { hint: `Add one: ${action("user.add", { email })}.` });
  return user;
}

/** Remove a user from its team: its API keys stop working (user_not_found) until it is added again. */
export function removeUser(db: Database.Database, email: string): User {
  const user = requireUser(db, email);
  db.prepare("UPDATE users SET removed_at = strftime('%Y-%m-%dT%H:%M:%fZ','now') WHERE id = ?").run(user.id);
  return user;
}

/** The users of every team (removed ones left out), with their team's name, by team and email. */
export function listUsers(db: Database.Database): Array<User & { team: string }> {
  return db.prepare("SELECT u.id, u.team_id AS teamId, u.email, u.role, t.name AS team FROM users u JOIN teams t ON t.id = u.team_id WHERE u.removed_at IS NULL ORDER BY t.name, u.email").all() as Array<
    User & { team: string }
  >;
}

/** A team's access policy; null when it has none (everything is allowed). */
export function teamPolicy(db: Database.Database, teamId: number): AccessPolicy | null {
  const stored = db.prepare("SELECT policy FROM teams WHERE id = ?").pluck().get(teamId) as string | null | undefined;
  return stored ? (JSON.parse(stored) as AccessPolicy) : null;
}

/** Replace a team's access policy (null: none). */
export function setTeamPolicy(db: Database.Database, teamId: number, policy: AccessPolicy | null): void {
  db.prepare("UPDATE teams SET policy = ? WHERE id = ?").run(policy === null ? null : JSON.stringify(policy), teamId);
}
