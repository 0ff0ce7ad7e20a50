/**
 * The public API's paths: `/v1/…`, `/v2/…` and `/mcp`, and the same under `/api` (the hosted service's clients
 * append `/v2/…` to a base address that ends in `/api`). Everything else under `/api/` is the admin API.
 */
const PUBLIC_API = /^(\/api)?\/(v\d+\/|mcp(\/|\?|$))/;

export function isPublicApiPath(url: string): boolean {
  return PUBLIC_API.test(url);
}

/** The reads anonymous callers may make when LDS_PUBLIC_READ is on: search, context and the MCP tools. */
const ANONYMOUS_READS = /^(\/api)?\/(v2\/libs\/search|v2\/context|mcp)(\/|\?|$)/;

export function isAnonymousRead(method: string, url: string): boolean {
  return (method === "GET" || (method === "POST" && isMcpPath(url))) && ANONYMOUS_READS.test(url);
}

/** The MCP endpoint, at /mcp or /api/mcp. */
export function isMcpPath(url: string): boolean {
  return /^(\/api)?\/mcp(\?|$)/.test(url);
}
