import type Database from "better-sqlite3";
import { addUser, createTeam } from "./accounts.js";
import { createApiKey } from "./api-keys.js";
import type { FirstTeam, FirstTeamRequest } from "../records.js";

/**
 * On a volume without teams only: a team, its owner and an API key, all or nothing. Returns null when teams exist
 * already (checked inside the same transaction, so two first runs at once cannot both succeed).
 */
export function createFirstTeam(db: Database.Database, first: FirstTeamRequest): FirstTeam | null {
  return db
    .transaction(() => {
      if (db.prepare("SELECT 1 FROM teams LIMIT 1").get()) return null;
      const team = createTeam(db, first.team, first.plan);
      const user = addUser(db, team, first.email, "owner");
      const { key, prefix } = createApiKey(db, user.id, "created by lds init");
      return { team: team.name, plan: team.plan, email: user.email, key, prefix };
    })
    .immediate();
}
