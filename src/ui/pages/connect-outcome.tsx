import { useEffect, useState } from "preact/hooks";
import type { ConnectedAccount } from "../../server/api-types.js";
import { api, ApiError } from "../api.js";
import { ErrorMessage } from "../components/error-message.js";

/**
 * What the OAuth callback's redirect says about a Connect. The address is anyone's to write, so the page takes
 * only codes from it and words them itself: a success is the id of an outcome the server kept (the account is read
 * from the server, behind the session), a failure is an error code with its reason and provider, each from a fixed
 * list. Nothing else in the address is shown, and an unknown code gets a generic message.
 */
interface FromAddress {
  outcomeId?: string;
  failure?: { code: string; reason: string; provider: string };
}

export function readCallbackAddress(search: string): FromAddress {
  const q = new URLSearchParams(search);
  const connected = q.get("connected");
  const code = q.get("error");
  if (code) return { failure: { code, reason: q.get("reason") ?? "", provider: q.get("provider") ?? "" } };
  // The server's ids are 22 base64url characters: anything else is not one of them, and is not even asked about.
  return connected && /^[A-Za-z0-9_-]{22}$/.test(connected) ? { outcomeId: connected } : {};
}

type Wording = (provider: string) => { message: string; hint: string };

const NOTHING = "nothing was connected";

/** oauth_failed, by the reason the server gives (src/oauth/failure.ts). */
const FAILED: Record<string, Wording> = {
  denied: (p) => ({ message: `${p} did not authorize LDS (consent was denied); ${NOTHING}.`, hint: "Connect again and approve the access LDS asks for." }),
  provider_error: (p) => ({ message: `${p} did not authorize LDS; ${NOTHING}.`, hint: "Connect again; the server's log has the provider's answer." }),
  no_code: (p) => ({ message: `${p} sent the browser back without an authorization code; ${NOTHING}.`, hint: "Connect again." }),
  client_rejected: (p) => ({ message: `${p} refused LDS's client id or secret; ${NOTHING}.`, hint: `Check the client id and secret in ${p}'s settings below.` }),
  code_rejected: (p) => ({ message: `${p} refused the authorization code; ${NOTHING}.`, hint: "The code was already used or has expired: connect again." }),
  refused: (p) => ({ message: `${p} refused the authorization; ${NOTHING}.`, hint: "Connect again; if it keeps failing, check the provider's settings below (the server's log has its answer)." }),
  unreachable: (p) => ({ message: `LDS could not reach ${p}; ${NOTHING}.`, hint: "Check the provider's URLs below and the server's network, then connect again." }),
  unexpected: (p) => ({ message: `${p} answered something LDS cannot read; ${NOTHING}.`, hint: "Check the provider's URLs below (the server's log has the answer)." }),
};

/** The error codes the callback answers (docs/admin-api.md, the callback row). */
const BY_CODE: Record<string, (reason: string) => Wording> = {
  oauth_state_invalid: () => () => ({
    message: `This authorization is unknown, was already used, or is older than 10 minutes; ${NOTHING}.`,
    hint: "Start Connect again from this page.",
  }),
  oauth_failed: (reason) => FAILED[reason] ?? ((p) => ({ message: `${p} did not complete the authorization; ${NOTHING}.`, hint: "Connect again; the server's log has the provider's answer." })),
  oauth_not_configured: () => (p) => ({ message: `${p} has no client id and secret any more; ${NOTHING}.`, hint: `Enter them in ${p}'s settings below, then connect again.` }),
  internal_error: () => () => ({ message: "The server failed while finishing the connection.", hint: "See the server's log, and the list of connected accounts below; then connect again if needed." }),
};

const GENERIC: Wording = () => ({ message: `The connection did not complete; ${NOTHING}.`, hint: "Connect again from this page." });

/** The failure as the page words it; the code is shown only when it is one the page knows. */
export function failureMessage(failure: NonNullable<FromAddress["failure"]>, providerNames: Map<string, string>): ApiError {
  const known = Object.hasOwn(BY_CODE, failure.code);
  const wording = known ? BY_CODE[failure.code]!(Object.hasOwn(FAILED, failure.reason) ? failure.reason : "") : GENERIC;
  const { message, hint } = wording(providerNames.get(failure.provider) ?? "the provider");
  return new ApiError(0, known ? failure.code : "", message.charAt(0).toUpperCase() + message.slice(1), hint);
}

/** The success line (the account as the server recorded it) or the failure; nothing for an id the server does not know. */
export function ConnectOutcome({ from, providerNames }: { from: FromAddress; providerNames: Map<string, string> | undefined }) {
  // undefined while the server is asked; null when there is nothing to announce (no id, or one it does not know).
  const [connected, setConnected] = useState<ConnectedAccount | null | undefined>(from.outcomeId ? undefined : null);
  useEffect(() => {
    if (from.outcomeId) api<ConnectedAccount>("GET", `/api/oauth/connected/${encodeURIComponent(from.outcomeId)}`).then(setConnected, () => setConnected(null));
  }, [from.outcomeId]);
  return (
    <>
      <div aria-live="polite" aria-busy={connected === undefined} data-testid="connect-outcome">
        {connected && (
          <p class="success" data-testid="connected">
            Connected {connected.account} ({connected.providerName}){connected.team ? ` for team ${connected.team}` : ""}.
          </p>
        )}
      </div>
      {/* Worded once the providers' names are known, so that the message does not change under the reader. */}
      {from.failure && providerNames && <ErrorMessage error={failureMessage(from.failure, providerNames)} />}
    </>
  );
}
