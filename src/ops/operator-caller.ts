import { LdsError } from "../errors.js";
import type { Caller } from "../store/api-keys.js";
import type { Store } from "../store/store.js";
import type { Team, User } from "../store/accounts.js";
import type { LibraryRow } from "../store/libraries.js";
import { action } from "../hints.js";

/**
 * An operator acting for a team (the dashboard's submit and refresh): the same rules as that team's owner using
 * an API key, so that a library submitted in the dashboard is owned, charged and restricted like any other.
 */
export async function operatorCallerFor(store: Store, teamNameOrId: string): Promise<Caller> {
  const team = await store.teams.require(teamNameOrId);
  const users = (await store.users.list()).filter((u) => u.team_id === team.id);
  return callerOf(team, users);
}

/**
 * An operator refreshing a library acts for the team it belongs to: a private library's team, else its submitter's,
 * else the first team with an owner (a public library anyone may refresh).
 */
export async function operatorCallerForLibrary(store: Store, library: LibraryRow): Promise<Caller> {
  const users = await store.users.list();
  const teams = await store.teams.list();
  const teamId = library.team_id ?? users.find((u) => u.id === library.owner_user_id)?.team_id;
  const team = teams.find((t) => t.id === teamId);
  if (team) return callerOf(team, users.filter((u) => u.team_id === team.id));
  const withOwner = teams.find((t) => users.some((u) => u.team_id === t.id && u.role !== "member"));
  if (!withOwner) throw noOwner("any team");
  return callerOf(withOwner, users.filter((u) => u.team_id === withOwner.id));
}

function callerOf(team: Team, users: User[]): Caller {
  const owner = users.find((u) => u.role === "owner") ?? users.find((u) => u.role === "admin");
  if (!owner) throw noOwner(`Team ${team.name}`);
  return { keyPrefix: "operator", userId: owner.id, email: owner.email, role: owner.role, teamId: team.id, plan: team.plan };
}

function noOwner(who: string): LdsError {
  return new LdsError("user_not_found", `${who} has no owner or admin to act as.`, { hint: `Add one: ${action("user.add", { email: "EMAIL" })}.` });
}
