import type { FastifyRequest } from "fastify";

/**
 * Which part of the server a request reached, decided from the route the router MATCHED (its registered pattern,
 * `request.routeOptions.url`), never from the raw `request.url`: the router decodes the path (`/%61pi/backup`
 * reaches `/api/backup`) and takes absolute-form targets (`POST http://host/api/backup`), so a test of the raw URL is
 * one spelling away from a bypass (issue 39 item 4). A route added later is classified by its own pattern, with no
 * list to keep up to date. Undefined when no route matched (the not-found handler answers; no handler runs).
 */
export function matchedRoute(request: FastifyRequest): string | undefined {
  return request.routeOptions.url;
}

/**
 * The public API's routes: `/v1/…`, `/v2/…` and `/mcp`, and the same under `/api` (the hosted service's clients
 * append `/v2/…` to a base address that ends in `/api`). Every other route is the admin API, the dashboard or health.
 */
const PUBLIC_API = /^(\/api)?\/(v\d+\/|mcp$)/;

export function isPublicApiRoute(route: string | undefined): boolean {
  return route !== undefined && PUBLIC_API.test(route);
}

/** The reads anonymous callers may make when LDS_PUBLIC_READ is on: search, context and the MCP tools. */
const ANONYMOUS_READS = /^(\/api)?\/(v2\/libs\/search|v2\/context|mcp)$/;

export function isAnonymousRead(method: string, route: string | undefined): boolean {
  return route !== undefined && (method === "GET" || (method === "POST" && isMcpRoute(route))) && ANONYMOUS_READS.test(route);
}

/** The MCP endpoint, at /mcp or /api/mcp. */
export function isMcpRoute(route: string | undefined): boolean {
  return route !== undefined && /^(\/api)?\/mcp$/.test(route);
}
