import type { Store } from "../store.js";
import { notYet } from "./not-yet.js";
import type { PgContext } from "./sql.js";

/** The account groups of the PostgreSQL store (teams, users, keys, connections, OAuth, admins), over `context`. */
export function createAccountGroups(context: PgContext): Pick<Store, "teams" | "users" | "apiKeys" | "connections" | "oauth" | "admins"> {
  void context;
  return {
    teams: notYet("teams"),
    users: notYet("users"),
    apiKeys: notYet("apiKeys"),
    connections: notYet("connections"),
    oauth: notYet("oauth"),
    admins: notYet("admins"),
  };
}
