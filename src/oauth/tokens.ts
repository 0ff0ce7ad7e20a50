import { LdsError } from "../errors.js";
import type { Store } from "../store/store.js";
import { ProviderRefusal } from "./http.js";
import { usableProvider } from "./provider-config.js";
import { isProviderKind, providerOf } from "./providers.js";
import { asOAuthFailure } from "./flow.js";
import { turnsByKey } from "../util/turns-by-key.js";

/** Refresh this long before the access token expires: a clone or a crawl started now must not outlive it. */
const EARLY_MS = 60_000;

/** What a connection's owner must do when its grant no longer works. */
export function reconnect(providerName: string, connects: "git" | "wiki"): string {
  return `reconnect the ${connects === "wiki" ? "wiki" : "git"} account (${providerName}) in the dashboard's Connections page`;
}

/** Refreshes of one grant in this process, one after the other (in front of the store's lock on the grant). */
const refreshTurns = turnsByKey<number>();

const disconnected = () => new LdsError("repository_auth_failed", "The connected account was disconnected.", { hint: "Connect it again in the dashboard's Connections page." });

/**
 * A grant that no longer works. The instruction is in the message too: a library's failure reason keeps only the
 * message, and it is what an operator reads on the Libraries page.
 */
function mustReconnect(providerName: string, connects: "git" | "wiki", what: string): LdsError {
  const todo = reconnect(providerName, connects);
  return new LdsError("repository_auth_failed", `${what}: ${todo}.`, { hint: `${todo[0]!.toUpperCase()}${todo.slice(1)}.` });
}

/**
 * After a host refused a grant's access token (a git clone's 401 or 403 with a token the provider invalidated before
 * it expired): a refreshed token to try once more, or undefined when the grant has no refresh token. Then the
 * refusal stands as it is and the grant stays connected: a 403 may only mean that the account may not read that
 * repository, which a new token would not change (grantAccessToken's `force` would mark such a grant revoked).
 */
export async function renewedAccessToken(store: Store, grantId: number): Promise<string | undefined> {
  const tokens = await store.oauth.tokens(grantId);
  if (!tokens?.refreshToken || tokens.state === "revoked") return undefined;
  return grantAccessToken(store, grantId, { force: true });
}

/**
 * A grant's access token, refreshed first when it expires within a minute, or always with `force` (the provider
 * answered 401 to it). A refresh the provider refuses (revoked, expired) marks the grant revoked and fails with a
 * reason that says to reconnect; the overview shows it until then.
 */
export async function grantAccessToken(store: Store, grantId: number, options: { force?: boolean } = {}): Promise<string> {
  const tokens = await store.oauth.tokens(grantId);
  if (!tokens || !isProviderKind(tokens.provider)) throw disconnected();
  const provider = providerOf(tokens.provider);
  if (tokens.state === "revoked") {
    throw mustReconnect(provider.name, provider.connects, `The ${provider.name} account's authorisation was revoked or has expired`);
  }
  const fresh = tokens.expiresAt === undefined || Date.parse(tokens.expiresAt) - Date.now() > EARLY_MS;
  if (fresh && !options.force) return tokens.accessToken;
  if (!tokens.refreshToken) {
    if (!fresh || options.force) await store.oauth.markRevoked(grantId, "the access token expired and the grant has no refresh token");
    throw mustReconnect(provider.name, provider.connects, `The ${provider.name} access token has expired and cannot be refreshed`);
  }
  // Read before the grant is held: the refresh below holds a database connection, and must not wait for another.
  const { config, clientSecret } = await usableProvider(store, tokens.provider as typeof provider.kind);
  // One refresh of a grant at a time, on every replica: the store holds the grant while the provider answers. A
  // caller that waited finds the tokens the one before it saved, and uses them instead of refreshing again. Within
  // this process callers take turns first, so that one replica holds one connection per grant, not one per caller.
  let refusal: string | undefined;
  const after = await refreshTurns(grantId, () =>
    store.oauth.refreshTokens(grantId, async (current) => {
      if (current.state === "revoked" || !current.refreshToken || current.accessToken !== tokens.accessToken) return "current";
      try {
        const next = await provider.refresh(config, clientSecret, current.refreshToken);
        // A provider that does not rotate answers no refresh token: the old one stays valid.
        return { tokens: { ...next, refreshToken: next.refreshToken ?? current.refreshToken } };
      } catch (err) {
        if (err instanceof ProviderRefusal && (err.error === "invalid_grant" || err.status === 400 || err.status === 401 || err.status === 403)) {
          refusal = err.message;
          return { revoked: err.message };
        }
        throw asOAuthFailure(provider.name, err);
      }
    }),
  );
  if (!after) throw disconnected();
  if (after.state === "revoked") {
    const why = refusal ? ` (${refusal})` : "";
    throw mustReconnect(provider.name, provider.connects, `The ${provider.name} account's authorisation was revoked or has expired${why}`);
  }
  return after.accessToken;
}
