import { OAuthFailure } from "./failure.js";

/** An OAuth error body ({error, error_description}) as the provider sent it, for messages (never holds a token). */
export class ProviderRefusal extends Error {
  constructor(
    readonly provider: string,
    readonly status: number,
    readonly error: string,
    readonly description: string,
  ) {
    super(`${provider} answered ${error}${description ? `: ${description}` : ""} (HTTP ${status})`);
  }
}

const TIMEOUT_MS = 15_000;

/**
 * One request to a provider: never follows a redirect (a response must not choose where a token or secret goes),
 * times out, and turns an OAuth error body into a ProviderRefusal. GitHub answers errors of its token endpoint
 * with HTTP 200 and an `error` field: that is a refusal too.
 */
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- a provider's JSON answer, each field checked with typeof where it is read
export async function providerRequest(provider: string, url: string, init: RequestInit): Promise<any> {
  let response: Response;
  try {
    response = await fetch(url, { ...init, redirect: "error", signal: AbortSignal.timeout(TIMEOUT_MS) });
  } catch (err) {
    throw new OAuthFailure("unreachable", `Cannot reach ${provider} at ${new URL(url).host} (${(err as Error).message}).`, {
      hint: "Check the provider's URLs in the Connections page and the network, then try again.",
    });
  }
  const text = await response.text();
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- a provider's JSON answer, each field checked with typeof where it is read
  let body: any;
  try {
    body = text ? JSON.parse(text) : {};
  } catch {
    body = undefined;
  }
  const error = body && typeof body.error === "string" ? body.error : undefined;
  if (!response.ok || error) {
    throw new ProviderRefusal(
      provider,
      response.status,
      error ?? `http_${response.status}`,
      typeof body?.error_description === "string" ? body.error_description.slice(0, 300) : (body?.message ?? "").toString().slice(0, 300),
    );
  }
  if (body === undefined) throw new OAuthFailure("unexpected", `${provider} answered ${new URL(url).pathname} with something that is not JSON.`, { hint: "Check the provider's URLs." });
  return body;
}

export const form = (fields: Record<string, string>) => ({
  method: "POST",
  headers: { "content-type": "application/x-www-form-urlencoded", accept: "application/json" },
  body: new URLSearchParams(fields).toString(),
});

export const json = (fields: Record<string, string>) => ({
  method: "POST",
  headers: { "content-type": "application/json", accept: "application/json" },
  body: JSON.stringify(fields),
});

export const bearer = (token: string) => ({ headers: { authorization: `Bearer ${token}`, accept: "application/json" } });
