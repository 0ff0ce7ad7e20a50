import { createHash, randomBytes } from "node:crypto";
import { LdsError } from "../errors.js";
import type { NewGrant } from "../store/records.js";
import type { Store } from "../store/store.js";
import { OAuthFailure, type OAuthFailureReason } from "./failure.js";
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
 * What a callback authorized: the grant to store (with its tokens) and the admin who started the flow. Storing it
 * is the use case's (ops/oauth-connections.ts), which audit-logs it with the admin as the actor.
 */
export interface Authorized {
  grant: NewGrant & { provider: ProviderKind };
  startedBy: string;
}

/** Why a callback connected nothing: the error, and the provider when the state named one. */
export interface NotConnected {
  error: LdsError;
  provider?: ProviderKind;
}

/**
 * The provider's redirect back: the state must be one we issued, unused and fresh (else nothing is sent
 * anywhere); a denied consent is reported as such; the code is exchanged with the verifier, and the account and
 * what it reaches are read. Answers the grant to store, or why there is none (every LdsError is answered, not
 * thrown, with the provider it concerns, so that the caller can report it by codes).
 */
export async function finishAuthorization(store: Store, query: CallbackQuery): Promise<{ authorized: Authorized } | { failed: NotConnected }> {
  const pending = query.state ? await store.oauth.takeState(query.state) : undefined;
  if (!pending || !isProviderKind(pending.provider)) {
    const error = new LdsError("oauth_state_invalid", "This authorization is unknown, was already used, or is older than 10 minutes; nothing was connected.", {
      hint: "Start Connect again from the dashboard's Connections page.",
    });
    return { failed: { error } };
  }
  const kind = pending.provider;
  try {
    const grant = await authorize(store, kind, pending, query);
    return { authorized: { grant, startedBy: pending.startedBy } };
  } catch (err) {
    if (err instanceof LdsError) return { failed: { error: err, provider: kind } };
    throw err;
  }
}

async function authorize(store: Store, kind: ProviderKind, pending: { teamId: number; verifier: string; redirectUri: string }, query: CallbackQuery): Promise<Authorized["grant"]> {
  const provider = providerOf(kind);
  if (query.error) {
    const denied = query.error === "access_denied";
    const why = denied ? "consent was denied" : `${query.error}${query.error_description ? `: ${query.error_description.slice(0, 200)}` : ""}`;
    throw new OAuthFailure(denied ? "denied" : "provider_error", `${provider.name} did not authorize LDS (${why}); nothing was connected.`, { hint: "Connect again and approve the access LDS asks for." });
  }
  if (!query.code) throw new OAuthFailure("no_code", `${provider.name} redirected back without a code; nothing was connected.`, { hint: "Connect again." });
  const { config, clientSecret } = await usableProvider(store, kind);
  try {
    const tokens = await provider.exchange(config, clientSecret, { code: query.code, verifier: pending.verifier, redirectUri: pending.redirectUri });
    const { account, target } = await provider.identify(config, tokens.accessToken);
    return { teamId: pending.teamId, provider: kind, account, scopes: tokens.scopes, tokens, target };
  } catch (err) {
    throw asOAuthFailure(provider.name, err);
  }
}

/** A provider's refusal or an unexpected answer, worded for the operator (never with a token or secret). */
export function asOAuthFailure(providerName: string, err: unknown): LdsError {
  if (err instanceof LdsError) return err;
  if (err instanceof ProviderRefusal) {
    const [reason, hint]: [OAuthFailureReason, string] =
      err.error === "invalid_client" || err.error === "incorrect_client_credentials"
        ? ["client_rejected", "Check the client id and secret in the Connections page."]
        : err.error === "bad_verification_code" || err.error === "invalid_grant"
          ? ["code_rejected", "The code was already used or has expired: connect again."]
          : ["refused", "Connect again; if it keeps failing, check the provider's settings."];
    return new OAuthFailure(reason, `${providerName} refused: ${err.message}.`, { hint });
  }
  return new OAuthFailure("unexpected", `${providerName} answered unexpectedly: ${(err as Error).message}.`, { hint: "Check the provider's URLs in the Connections page." });
}
