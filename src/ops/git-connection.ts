import { DEFAULT_GIT_HOST, type GitUrlPolicy } from "../config/git-settings.js";
import { LdsError } from "../errors.js";
import type { Store } from "../store/store.js";
import { action } from "../hints.js";
import { grantAccessToken, renewedAccessToken } from "../oauth/tokens.js";

export interface GitAuth {
  token?: string;
  /** A fresh token after the host refused `token`, or undefined when there is none to try. */
  renew?: () => Promise<string | undefined>;
}

/**
 * The team's connected git token for a repository on `host`: undefined when the team has no git connection, and a
 * 403 when its connection is pinned to other hosts (the token is never sent anywhere else; issue 11, item 2).
 * Checked when a private repository is submitted, and again when its job runs.
 */
export async function connectedGitToken(store: Store, teamId: number, host: string, policy: GitUrlPolicy | undefined): Promise<string | undefined> {
  return (await connectedGitAuth(store, teamId, host, policy)).token;
}

/**
 * connectedGitToken, with `renew` for a connection made by OAuth: called once when the host refuses the token, it
 * answers a refreshed one (or undefined when the grant cannot be refreshed).
 */
export async function connectedGitAuth(store: Store, teamId: number, host: string, policy: GitUrlPolicy | undefined): Promise<GitAuth> {
  const found = await store.connections.gitToken(teamId, host, policy?.defaultHost ?? DEFAULT_GIT_HOST);
  // Connected by OAuth: the grant's access token, refreshed when it is about to expire.
  const grantId = found.grantId;
  if (grantId !== undefined) return { token: await grantAccessToken(store, grantId), renew: () => renewedAccessToken(store, grantId) };
  if (found.token || found.otherHosts === null) return { token: found.token };
  throw new LdsError("forbidden", `Your team's connected git account is not valid for ${host} (it is for ${found.otherHosts.join(", ")}); its token is never sent to another host.`, {
    hint: `Pass a gitToken for ${host}, or ask an operator to connect an account for it (${action("connection.addGit", { host })}).`,
  });
}
