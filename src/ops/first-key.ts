import { LdsError } from "../errors.js";
import type { Plan } from "../store/accounts.js";
import type { Store } from "../store/store.js";
import { action } from "../hints.js";

export interface FirstKey {
  team: string;
  plan: Plan;
  email: string;
  key: string;
  prefix: string;
}

/**
 * The first-run path (`lds init`): a team, its owner and an API key in one step, on a volume that has no team
 * yet. Once teams exist, the separate commands (teams, users, keys) are the way, so that init never guesses.
 */
export async function createFirstKey(store: Store, options: { team: string; email: string; plan: Plan }): Promise<FirstKey> {
  const made = await store.teams.createFirst(options);
  if (!made) {
    throw new LdsError("validation_error", "This data volume already has teams: lds init is for the first key of a new installation.", {
      hint: `Create a key for an existing user: ${action("key.create", { email: options.email })}.`,
    });
  }
  return made;
}
