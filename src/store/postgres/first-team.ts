import type { FirstTeam, FirstTeamRequest } from "../records.js";
import { createApiKey } from "./api-keys.js";
import type { PgContext } from "./sql.js";
import { createTeam } from "./teams.js";
import { addUser } from "./users.js";

/**
 * On a store without teams only: a team, its owner and an API key, all or nothing. Returns null when teams exist
 * already. The teams table is locked against inserts (not reads) for the transaction, so that of two first runs at
 * once, on one replica or two, the second waits, then finds the first's team: SQLite's one writer does the same.
 */
export async function createFirstTeam({ transaction }: PgContext, first: FirstTeamRequest): Promise<FirstTeam | null> {
  return transaction(async (tx) => {
    await tx.run("LOCK TABLE teams IN SHARE ROW EXCLUSIVE MODE");
    if (await tx.row("SELECT 1 FROM teams LIMIT 1")) return null;
    const team = await createTeam(tx, first.team, first.plan);
    const user = await addUser(tx, team, first.email, "owner");
    const { key, prefix } = await createApiKey(tx, user.id, "created by lds init");
    return { team: team.name, plan: team.plan, email: user.email, key, prefix };
  });
}
