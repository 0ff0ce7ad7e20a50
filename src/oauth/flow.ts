import { createHash, randomBytes } from "node:crypto";
import { LdsError } from "../errors.js";
import type { Store } from "../store/store.js";
import { ProviderRefusal } from "./http.js";
import { usableProvider } from "./provider-config.js";
import { isProviderKind, providerOf, type ProviderKind } from "./providers.js";

/** How long an operator has to consent at the provider. */
const STATE_TTL_SECONDS = 600;

/** The callback every provider redirects to: one URL to register, the state tells the flows apart. */
export const CALLBACK_PATH = "/api/oauth/callback";

/**
 * Begin an authorization-code flow with PKCE for a team: a random state (stored hashed, usable once, 10 minutes)
 * and a verifier whose S256 challenge goes to the provider. Answers the provider's authorize URL.
 */
export async function startAuthorization(store: Store, request: { kind: ProviderKind; team: string; origin: string; startedBy: string }): Promise<{ authorizeUrl: string }> {
  const { config } = await usableProvider(store, request.kind);
  const team = await store.teams.require(request.team);
  const state = randomBytes(24).toString("base64url");
  const verifier = randomBytes(48).toString("base64url");
  const challenge = createHash("sha256").update(verifier).digest("base64url");
  const redirectUri = `${request.origin}${CALLBACK_PATH}`;
  await store.oauth.createState(state, { provider: request.kind, teamId: team.id, verifier, redirectUri, startedBy: request.startedBy }, STATE_TTL_SECONDS);
  return { authorizeUrl: providerOf(request.kind).authorizeUrl(config, { state, challenge, redirectUri }) };
}

export interface CallbackQuery {
  state?: string;
  code?: string;
  error?: string;
  error_description?: string;
}

/**
 * The provider's redirect back: the state must be one we issued, unused and fresh (else nothing is sent
 * anywhere); a denied consent is reported as such; the code is exchanged with the verifier, the account and what
 * it reaches are read, and the grant is stored. Answers what was connected.
 */
export async function finishAuthorization(store: Store, query: CallbackQuery): Promise<{ provider: ProviderKind; teamId: number; account: string; grantId: number; startedBy: string }> {
  const pending = query.state ? await store.oauth.takeState(query.state) : undefined;
  if (!pending || !isProviderKind(pending.provider)) {
    throw new LdsError("oauth_state_invalid", "This authorization is unknown, was already used, or is older than 10 minutes; nothing was connected.", {
      hint: "Start Connect again from the dashboard's Connections page.",
    });
  }
  const provider = providerOf(pending.provider);
  if (query.error) {
    const why = query.error === "access_denied" ? "consent was denied" : `${query.error}${query.error_description ? `: ${query.error_description.slice(0, 200)}` : ""}`;
    throw new LdsError("oauth_failed", `${provider.name} did not authorize LDS (${why}); nothing was connected.`, { hint: "Connect again and approve the access LDS asks for." });
  }
  if (!query.code) throw new LdsError("oauth_failed", `${provider.name} redirected back without a code; nothing was connected.`, { hint: "Connect again." });
  const { config, clientSecret } = await usableProvider(store, pending.provider);
  try {
    const tokens = await provider.exchange(config, clientSecret, { code: query.code, verifier: pending.verifier, redirectUri: pending.redirectUri });
    const { account, target } = await provider.identify(config, tokens.accessToken);
    const grantId = await store.oauth.saveGrant({ teamId: pending.teamId, provider: pending.provider, account, scopes: tokens.scopes, tokens, target });
    return { provider: pending.provider, teamId: pending.teamId, account, grantId, startedBy: pending.startedBy };
  } catch (err) {
    throw asOAuthFailure(provider.name, err);
  }
}

/** A provider's refusal or an unexpected answer, worded for the operator (never with a token or secret). */
export function asOAuthFailure(providerName: string, err: unknown): LdsError {
  if (err instanceof LdsError) return err;
  if (err instanceof ProviderRefusal) {
    const hint =
      err.error === "invalid_client" || err.error === "incorrect_client_credentials"
        ? "Check the client id and secret in the Connections page."
        : err.error === "bad_verification_code" || err.error === "invalid_grant"
          ? "The code was already used or has expired: connect again."
          : "Connect again; if it keeps failing, check the provider's settings.";
    return new LdsError("oauth_failed", `${providerName} refused: ${err.message}.`, { hint });
  }
  return new LdsError("oauth_failed", `${providerName} answered unexpectedly: ${(err as Error).message}.`, { hint: "Check the provider's URLs in the Connections page." });
}
