import type { Store } from "../store.js";
import * as admins from "./admins.js";
import * as apiKeys from "./api-keys.js";
import * as connections from "./connections.js";
import { createFirstTeam } from "./first-team.js";
import * as grants from "./oauth-grants.js";
import * as states from "./oauth-states.js";
import type { PgContext, Sql } from "./sql.js";
import * as teams from "./teams.js";
import * as users from "./users.js";

/**
 * The account groups of the PostgreSQL store (teams, users, keys, connections, OAuth, admins), over `context`: each
 * operation is its module's function with the pool's SQL (one statement, or several that need no transaction), the
 * key that seals tokens, or the whole context (operations that run a transaction) bound.
 */
export function createAccountGroups(context: PgContext): Pick<Store, "teams" | "users" | "apiKeys" | "connections" | "oauth" | "admins"> {
  const on =
    <A extends unknown[], R>(fn: (sql: Sql, ...args: A) => Promise<R>) =>
    (...args: A): Promise<R> =>
      fn(context.sql, ...args);
  const sealed =
    <A extends unknown[], R>(fn: (sql: Sql, key: Buffer, ...args: A) => Promise<R>) =>
    (...args: A): Promise<R> =>
      fn(context.sql, context.key, ...args);
  const whole =
    <A extends unknown[], R>(fn: (context: PgContext, ...args: A) => Promise<R>) =>
    (...args: A): Promise<R> =>
      fn(context, ...args);

  return {
    teams: {
      create: on(teams.createTeam),
      find: on(teams.findTeam),
      require: on(teams.requireTeam),
      list: on(teams.listTeams),
      setPlan: on(teams.setTeamPlan),
      policy: on(teams.teamPolicy),
      setPolicy: on(teams.setTeamPolicy),
      addProject: on(teams.addTeamProject),
      hasProject: on(teams.teamHasProject),
      createFirst: whole(createFirstTeam),
    },
    users: {
      add: on(users.addUser),
      require: on(users.requireUser),
      remove: on(users.removeUser),
      list: on(users.listUsers),
    },
    apiKeys: {
      create: on(apiKeys.createApiKey),
      authenticate: on(apiKeys.authenticate),
      hasActive: on(apiKeys.hasActiveApiKey),
      revoke: on(apiKeys.revokeApiKey),
      list: on(apiKeys.listApiKeys),
    },
    connections: {
      addWiki: whole(connections.addWikiConnection),
      addGit: whole(connections.addGitConnection),
      gitToken: sealed(connections.gitConnectionToken),
      findWiki: on(connections.findWikiConnection),
      wikiToken: sealed(connections.wikiToken),
      list: on(connections.listConnections),
      removePasted: whole(connections.removePastedConnection),
    },
    oauth: {
      createState: on(states.createOAuthState),
      takeState: on(states.takeOAuthState),
      saveGrant: whole(grants.saveOAuthGrant),
      tokens: sealed(grants.oauthGrantTokens),
      updateTokens: whole(grants.updateOAuthTokens),
      refreshTokens: whole(grants.refreshOAuthTokens),
      markRevoked: on(grants.markOAuthGrantRevoked),
      remove: whole(grants.removeOAuthGrant),
      list: () => grants.selectOAuthGrants(context.sql),
      find: async (grantId) => (await grants.selectOAuthGrants(context.sql, grantId))[0],
    },
    admins: {
      find: on(admins.findAdmin),
      count: on(admins.countAdmins),
      create: on(admins.insertAdmin),
      createFirst: whole(admins.insertFirstAdmin),
      createSession: on(admins.createSession),
      sessionAdmin: on(admins.sessionAdmin),
      deleteSession: on(admins.deleteSession),
    },
  };
}
