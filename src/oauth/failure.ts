import { LdsError, type LdsErrorOptions } from "../errors.js";

/**
 * Why a provider failed an authorization, as a code from a fixed list. The OAuth callback sends the dashboard only
 * such codes (never a message: the address it redirects to can be forged by anyone), and the page words each one;
 * the message, with the provider's own words, goes to the server's log and the CLI.
 */
export const OAUTH_FAILURE_REASONS = [
  "denied", // the operator declined consent (access_denied)
  "provider_error", // the provider redirected back with another error
  "no_code", // the provider redirected back with neither a code nor an error
  "client_rejected", // the token endpoint refused the client id or secret
  "code_rejected", // the token endpoint refused the code (used twice, expired)
  "refused", // any other refusal by the provider
  "unreachable", // the provider could not be reached
  "unexpected", // the provider answered something LDS cannot read
] as const;

export type OAuthFailureReason = (typeof OAUTH_FAILURE_REASONS)[number];

/** An `oauth_failed` error that knows its reason. */
export class OAuthFailure extends LdsError {
  constructor(
    readonly reason: OAuthFailureReason,
    message: string,
    options: LdsErrorOptions = {},
  ) {
    super("oauth_failed", message, options);
  }
}
