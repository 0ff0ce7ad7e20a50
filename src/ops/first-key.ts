import { LdsError } from "../errors.js";
import type { Plan } from "../store/records.js";
import type { Store } from "../store/store.js";
import { action } from "../hints.js";
import { recordAccountChange } from "./account-audit.js";
import type { Actor } from "./actor.js";

export interface FirstKey {
  team: string;
  plan: Plan;
  email: string;
  key: string;
  prefix: string;
}

/**
 * The first-run path (`lds init`): a team, its owner and an API key in one step, on a volume that has no team
 * yet. Once teams exist, the separate commands (teams, users, keys) are the way, so that init never guesses. The
 * audit log gets the three records those commands would have written.
 */
export async function createFirstKey(store: Store, actor: Actor, options: { team: string; email: string; plan: Plan }): Promise<FirstKey> {
  const made = await store.teams.createFirst(options);
  if (!made) {
    throw new LdsError("validation_error", "This data volume already has teams: lds init is for the first key of a new installation.", {
      hint: `Create a key for an existing user: ${action("key.create", { email: options.email })}.`,
    });
  }
  const team = await store.teams.require(made.team);
  const owner = await store.users.require(made.email);
  const keyName = (await store.apiKeys.list()).find((k) => k.prefix === made.prefix)?.name ?? null;
  await recordAccountChange(store, actor, "team.create", `team:${team.id}`, { name: team.name, plan: team.plan });
  await recordAccountChange(store, actor, "user.add", `user:${owner.id}`, { email: owner.email, team: team.name, role: owner.role });
  await recordAccountChange(store, actor, "key.create", `key:${made.prefix}`, { email: owner.email, name: keyName });
  return made;
}
