/** Characters a token is made of: an occurrence of the token inside a longer run of them is not the token. */
const TOKEN_CHAR = "A-Za-z0-9._~+=-";

/**
 * Replace whole occurrences of `secret` in `text` with [redacted]. Only where it stands as a token: a short
 * secret such as "0" must not mangle "127.0.0.1" in a failure reason that other people read.
 */
export function redactToken(text: string, secret: string | undefined): string {
  if (!secret) return text;
  const escaped = secret.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
  return text.replace(new RegExp(`(?<![${TOKEN_CHAR}])${escaped}(?![${TOKEN_CHAR}])`, "g"), "[redacted]");
}
