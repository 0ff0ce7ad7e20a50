import { LdsError } from "../errors.js";
import { finishAuthorization, type CallbackQuery, type NotConnected } from "../oauth/flow.js";
import { saveProviderConfig, type ProviderConfigPatch } from "../oauth/provider-config.js";
import type { ProviderKind } from "../oauth/providers.js";
import { revokeAtProvider, type Revocation } from "../oauth/revoke.js";
import type { Store } from "../store/store.js";
import { recordAccountChange } from "./account-audit.js";
import { adminActor, type Actor } from "./actor.js";

// Connections made by OAuth (the dashboard's Connect, oauth/flow.ts), and the providers' settings they need. Like
// every account change, each is stored and audit-logged here, never by the route that asked; no record holds a
// token or a client secret.

/** What a callback connected. */
export interface Connected {
  provider: ProviderKind;
  teamId: number;
  account: string;
  grantId: number;
}

/**
 * The provider's redirect back: when it authorized LDS, the grant is stored and logged as connected by the admin
 * who started the flow (the callback itself carries no session). Answers what was connected, or why nothing was.
 */
export async function connectOAuthAccount(store: Store, query: CallbackQuery): Promise<{ connected: Connected } | { failed: NotConnected }> {
  const result = await finishAuthorization(store, query);
  if ("failed" in result) return result;
  const { grant, startedBy } = result.authorized;
  let grantId: number;
  try {
    grantId = await store.oauth.saveGrant(grant);
  } catch (err) {
    if (err instanceof LdsError) return { failed: { error: err, provider: grant.provider } };
    throw err;
  }
  await recordAccountChange(store, adminActor(startedBy), "connection.connect", `team:${grant.teamId}`, { provider: grant.provider, account: grant.account });
  return { connected: { provider: grant.provider, teamId: grant.teamId, account: grant.account, grantId } };
}

/**
 * Revoke a grant at its provider where it can be, then forget it here with every connection it made. Not
 * audit-logged: its callers are (the admin API's Disconnect below, `removeConnection` in connections.ts).
 */
export async function forgetGrant(store: Store, grantId: number): Promise<Revocation> {
  const grant = await store.oauth.find(grantId);
  if (!grant) throw new LdsError("connection_not_found", `No connection ${grantId}.`, { hint: "List them in the dashboard's Connections page." });
  const revocation = await revokeAtProvider(store, grant);
  await store.oauth.remove(grantId);
  return revocation;
}

/** The admin API's Disconnect of an OAuth connection (a grant, by its id in GET /api/connections). */
export async function disconnectOAuthGrant(store: Store, actor: Actor, grantId: number): Promise<{ disconnected: number } & Revocation> {
  const result = { disconnected: grantId, ...(await forgetGrant(store, grantId)) };
  await recordAccountChange(store, actor, "connection.disconnect", `connection:${grantId}`, result);
  return result;
}

/** A provider's settings (client id, write-only secret, URLs); the log says whether the secret changed, never what it is. */
export async function changeProviderSettings(store: Store, actor: Actor, kind: ProviderKind, patch: ProviderConfigPatch): Promise<void> {
  await saveProviderConfig(store, kind, patch);
  await recordAccountChange(store, actor, "oauth.provider", kind, { clientId: patch.clientId ?? null, secretChanged: patch.clientSecret !== undefined });
}
