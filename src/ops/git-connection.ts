import { DEFAULT_GIT_HOST, type GitUrlPolicy } from "../config/git-settings.js";
import { LdsError } from "../errors.js";
import type { Store } from "../store/store.js";
import { action } from "../hints.js";
import { grantAccessToken } from "../oauth/tokens.js";

/**
 * The team's connected git token for a repository on `host`: undefined when the team has no git connection, and a
 * 403 when its connection is pinned to other hosts (the token is never sent anywhere else; issue 11, item 2).
 * Checked when a private repository is submitted, and again when its job runs.
 */
export async function connectedGitToken(store: Store, teamId: number, host: string, policy: GitUrlPolicy | undefined): Promise<string | undefined> {
  const found = await store.connections.gitToken(teamId, host, policy?.defaultHost ?? DEFAULT_GIT_HOST);
  // Connected by OAuth: the grant's access token, refreshed when it is about to expire.
  if (found.grantId !== undefined) return grantAccessToken(store, found.grantId);
  if (found.token || found.otherHosts === null) return found.token;
  throw new LdsError("forbidden", `Your team's connected git account is not valid for ${host} (it is for ${found.otherHosts.join(", ")}); its token is never sent to another host.`, {
    hint: `Pass a gitToken for ${host}, or ask an operator to connect an account for it (${action("connection.addGit", { host })}).`,
  });
}
