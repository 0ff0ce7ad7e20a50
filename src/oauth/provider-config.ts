import { LdsError } from "../errors.js";
import type { Store } from "../store/store.js";
import { providerOf, type ProviderKind } from "./providers.js";

/** An operator's settings of one provider: the OAuth app's client id (its secret is sealed apart) and where it lives. */
export interface ProviderConfig {
  clientId: string;
  authorizeUrl: string;
  tokenUrl: string;
  /** The provider's API: the only place its tokens are sent (besides the git hosts of a git provider). */
  apiBase: string;
  scopes: string;
  /** Git providers: the hosts whose repositories the token may clone. */
  gitHosts: string[];
}

const SETTING = (kind: ProviderKind) => `oauth.${kind}`;
const SECRET = (kind: ProviderKind) => `oauth.${kind}.clientSecret`;

export async function loadProviderConfig(store: Store, kind: ProviderKind): Promise<ProviderConfig & { clientSecretSet: boolean }> {
  const stored = await store.settings.get(SETTING(kind));
  const defaults = providerOf(kind).defaults;
  const config = { ...defaults, ...(stored ? (JSON.parse(stored) as Partial<ProviderConfig>) : {}) };
  return { ...config, clientSecretSet: await store.settings.hasSecret(SECRET(kind)) };
}

/** The config and the unsealed client secret, for a flow: oauth_not_configured until both are set. */
export async function usableProvider(store: Store, kind: ProviderKind): Promise<{ config: ProviderConfig; clientSecret: string }> {
  const config = await loadProviderConfig(store, kind);
  const clientSecret = await store.settings.secret(SECRET(kind));
  if (!config.clientId || !clientSecret) {
    throw new LdsError("oauth_not_configured", `${providerOf(kind).name} has no OAuth client id and secret yet.`, {
      hint: "Register an OAuth app with the provider, then enter its client id and secret in the dashboard's Connections page.",
    });
  }
  return { config, clientSecret };
}

/** The settings a PUT changes: those it names; `clientSecret: ""` removes the secret. */
export type ProviderConfigPatch = Partial<ProviderConfig> & { clientSecret?: string };

/** Save an operator's settings; `clientSecret` given is sealed, "" removes it, undefined keeps it. */
export async function saveProviderConfig(store: Store, kind: ProviderKind, update: ProviderConfigPatch): Promise<void> {
  const { clientSecret, ...settings } = update;
  const current = await loadProviderConfig(store, kind);
  const next: ProviderConfig = {
    clientId: settings.clientId ?? current.clientId,
    authorizeUrl: settings.authorizeUrl || current.authorizeUrl,
    tokenUrl: settings.tokenUrl || current.tokenUrl,
    apiBase: (settings.apiBase || current.apiBase).replace(/\/+$/, ""),
    scopes: settings.scopes || current.scopes,
    gitHosts: (settings.gitHosts ?? current.gitHosts).map((h) => h.toLowerCase()),
  };
  await store.settings.saveWithSecrets(SETTING(kind), JSON.stringify(next), [{ name: SECRET(kind), value: clientSecret }]);
}
