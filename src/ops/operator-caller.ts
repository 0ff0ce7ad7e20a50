import { LdsError } from "../errors.js";
import type { Caller, Library, Team, User } from "../store/records.js";
import type { Store } from "../store/store.js";
import { action } from "../hints.js";

/**
 * An operator acting for a team (the dashboard's submit and refresh): the same rules as that team's owner using
 * an API key, so that a library submitted in the dashboard is owned, charged and restricted like any other.
 */
export async function operatorCallerFor(store: Store, teamNameOrId: string): Promise<Caller> {
  const team = await store.teams.require(teamNameOrId);
  const users = (await store.users.list()).filter((u) => u.teamId === team.id);
  return callerOf(team, users);
}

/**
 * An operator refreshing a library acts for the team it belongs to: a private library's team, else its submitter's,
 * else the first team with an owner (a public library anyone may refresh).
 */
export async function operatorCallerForLibrary(store: Store, library: Library): Promise<Caller> {
  const users = await store.users.list();
  const teams = await store.teams.list();
  const teamId = library.teamId ?? users.find((u) => u.id === library.ownerUserId)?.teamId;
  const team = teams.find((t) => t.id === teamId);
  if (team)
    return callerOf(
      team,
      users.filter((u) => u.teamId === team.id),
    );
  const withOwner = teams.find((t) => users.some((u) => u.teamId === t.id && u.role !== "member"));
  if (!withOwner) throw noOwner("any team");
  return callerOf(
    withOwner,
    users.filter((u) => u.teamId === withOwner.id),
  );
}

function callerOf(team: Team, users: User[]): Caller {
  const owner = users.find((u) => u.role === "owner") ?? users.find((u) => u.role === "admin");
  if (!owner) throw noOwner(`Team ${team.name}`);
  return { keyPrefix: "operator", userId: owner.id, email: owner.email, role: owner.role, teamId: team.id, plan: team.plan };
}

function noOwner(who: string): LdsError {
  return new LdsError("user_not_found", `${who} has no owner or admin to act as.`, { hint: `Add one: ${action("user.add", { email: "EMAIL" })}.` });
}
