import { LdsError } from "../errors.js";
import type { Store } from "../store/store.js";
import { usableProvider } from "./provider-config.js";
import { isProviderKind, providerOf } from "./providers.js";

/**
 * Disconnect: revoke the grant at the provider where it offers that, then forget it here whatever the provider
 * said (an operator who disconnects wants the token gone from LDS). Answers whether the provider revoked it.
 */
export async function disconnectGrant(store: Store, grantId: number): Promise<{ disconnected: number; revokedAtProvider: boolean; note: string | null }> {
  const grant = await store.oauth.find(grantId);
  if (!grant) throw new LdsError("connection_not_found", `No connection ${grantId}.`, { hint: "List them in the dashboard's Connections page." });
  let revokedAtProvider = false;
  let note: string | null = null;
  const provider = isProviderKind(grant.provider) ? providerOf(grant.provider) : undefined;
  const tokens = await store.oauth.tokens(grantId);
  if (!provider?.revoke) note = `${provider?.name ?? grant.provider} offers no revocation endpoint: remove LDS from the account's authorized apps there too.`;
  else if (tokens && grant.state === "active") {
    try {
      const { config, clientSecret } = await usableProvider(store, provider.kind);
      await provider.revoke(config, clientSecret, tokens);
      revokedAtProvider = true;
    } catch (err) {
      note = `${provider.name} did not confirm the revocation (${(err as Error).message}); the token was removed here.`;
    }
  }
  await store.oauth.remove(grantId);
  return { disconnected: grantId, revokedAtProvider, note };
}
