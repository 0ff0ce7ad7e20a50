import type Database from "better-sqlite3";
import { LdsError } from "../errors.js";
import { addUser, createTeam, findTeam, listTeams, type Plan } from "../store/accounts.js";
import { createApiKey } from "../store/api-keys.js";

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
export function createFirstKey(db: Database.Database, options: { team: string; email: string; plan: Plan }): FirstKey {
  return db.transaction(() => {
    if (listTeams(db).length > 0) {
      throw new LdsError("validation_error", "This data volume already has teams: lds init is for the first key of a new installation.", {
        hint: `Create a key for an existing user with: lds keys create --email ${options.email}`,
      });
    }
    const team = findTeam(db, options.team) ?? createTeam(db, options.team, options.plan);
    const user = addUser(db, team, options.email, "owner");
    const { key, prefix } = createApiKey(db, user.id, "created by lds init");
    return { team: team.name, plan: team.plan, email: user.email, key, prefix };
  })();
}
