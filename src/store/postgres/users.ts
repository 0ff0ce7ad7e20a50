import { LdsError } from "../../errors.js";
import { action } from "../../hints.js";
import type { Role, Team, User } from "../records.js";
import { NOW_TEXT } from "./schema-text.js";
import type { Sql } from "./sql.js";
import { isUniqueViolation } from "./unique-violation.js";

const USER_COLUMNS = `id, team_id AS "teamId", email, role`;

export async function addUser(sql: Sql, team: Team, email: string, role: Role): Promise<User> {
  if (!/^[^@\s]+@[^@\s]+$/.test(email)) throw new LdsError("validation_error", `"${email}" is not an email address.`);
  // A removed user comes back with the team and role given now (and its old keys work again), in one statement, so
  // that of two replicas adding it at once one brings it back and the other finds it there.
  const revived = await sql.row<User>(`UPDATE users SET team_id = $1, role = $2, removed_at = NULL WHERE email = $3 AND removed_at IS NOT NULL RETURNING ${USER_COLUMNS}`, [team.id, role, email]);
  if (revived) return revived;
  try {
    return (await sql.row<User>(`INSERT INTO users (team_id, email, role) VALUES ($1, $2, $3) RETURNING ${USER_COLUMNS}`, [team.id, email, role]))!;
  } catch (err) {
    if (isUniqueViolation(err)) throw new LdsError("validation_error", `A user ${email} already exists.`);
    throw err;
  }
}

export async function requireUser(sql: Sql, email: string): Promise<User> {
  const user = await sql.row<User>(`SELECT ${USER_COLUMNS} FROM users WHERE email = $1 AND removed_at IS NULL`, [email]);
  if (!user) throw userNotFound(email);
  return user;
}

/** Remove a user from its team: its API keys stop working (user_not_found) until it is added again. */
export async function removeUser(sql: Sql, email: string): Promise<User> {
  // One statement: of two removals at once, one removes the user and the other finds no current user.
  const removed = await sql.row<User>(`UPDATE users SET removed_at = ${NOW_TEXT} WHERE email = $1 AND removed_at IS NULL RETURNING ${USER_COLUMNS}`, [email]);
  if (!removed) throw userNotFound(email);
  return removed;
}

/** The users of every team (removed ones left out), with their team's name, by team and email in byte order (as SQLite). */
export async function listUsers(sql: Sql): Promise<Array<User & { team: string }>> {
  return sql.rows<User & { team: string }>(
    `SELECT u.id, u.team_id AS "teamId", u.email, u.role, t.name AS team FROM users u JOIN teams t ON t.id = u.team_id
     WHERE u.removed_at IS NULL ORDER BY t.name COLLATE "C", u.email COLLATE "C"`,
  );
}

function userNotFound(email: string): LdsError {
  return new LdsError("user_not_found", `No user ${email}.`, { hint: `Add one: ${action("user.add", { email })}.` });
}
