import type { OAuthGrant } from "../store/records.js";
import type { Store } from "../store/store.js";
import { usableProvider } from "./provider-config.js";
import { isProviderKind, providerOf } from "./providers.js";

/** What the provider said to a revocation: whether it revoked the grant, and what the operator should know if not. */
export interface Revocation {
  revokedAtProvider: boolean;
  note: string | null;
}

/**
 * Revoke a grant at its provider where the provider offers that. Never throws for the provider's refusal: an
 * operator who disconnects wants the token gone from LDS whatever the provider said (the caller forgets it).
 */
export async function revokeAtProvider(store: Store, grant: OAuthGrant): Promise<Revocation> {
  const provider = isProviderKind(grant.provider) ? providerOf(grant.provider) : undefined;
  if (!provider?.revoke) return { revokedAtProvider: false, note: `${provider?.name ?? grant.provider} offers no revocation endpoint: remove LDS from the account's authorized apps there too.` };
  const tokens = await store.oauth.tokens(grant.id);
  if (!tokens || grant.state !== "active") return { revokedAtProvider: false, note: null };
  try {
    const { config, clientSecret } = await usableProvider(store, provider.kind);
    await provider.revoke(config, clientSecret, tokens);
    return { revokedAtProvider: true, note: null };
  } catch (err) {
    return { revokedAtProvider: false, note: `${provider.name} did not confirm the revocation (${(err as Error).message}); the token was removed here.` };
  }
}
