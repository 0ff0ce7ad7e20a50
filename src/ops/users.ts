import type { Role, Team, User } from "../store/records.js";
import type { Store } from "../store/store.js";
import { recordAccountChange } from "./account-audit.js";
import type { Actor } from "./actor.js";

/** Add a user to a team (by name or id); a removed user comes back with this team and role, and its keys with it. */
export async function addUser(store: Store, actor: Actor, teamNameOrId: string, email: string, role: Role): Promise<{ user: User; team: Team }> {
  const team = await store.teams.require(teamNameOrId);
  const user = await store.users.add(team, email, role);
  await recordAccountChange(store, actor, "user.add", `user:${user.id}`, { email: user.email, team: team.name, role: user.role });
  return { user, team };
}

/** Remove a user from its team: its API keys answer user_not_found until it is added again. */
export async function removeUser(store: Store, actor: Actor, email: string): Promise<User> {
  const user = await store.users.remove(email);
  await recordAccountChange(store, actor, "user.remove", `user:${user.id}`, { email: user.email });
  return user;
}
