import type { FastifyRequest } from "fastify";
import { LdsError } from "../errors.js";
import { isPublicApiRoute, matchedRoute } from "./public-paths.js";

const STATE_CHANGING = new Set(["POST", "PUT", "PATCH", "DELETE"]);
/** The content types a cross-site form or fetch may send without a CORS preflight. */
const SIMPLE_TYPES = ["text/plain", "application/x-www-form-urlencoded", "multipart/form-data"];
/** What a body sent to the admin API may be: JSON, or an archive upload. */
const ACCEPTED_TYPES = ["application/json", "application/octet-stream"];

/**
 * Global onRequest hook (issue 11 item 8): a state-changing request must come from the page's own origin. A browser
 * names the requester in Sec-Fetch-Site and Origin; either one saying "another site" is refused, and so is a body of
 * a type another site could send without a preflight (the admin API takes JSON, and archives as
 * application/octet-stream). Command-line clients send neither header and pass.
 *
 * Which requests it guards is decided from the MATCHED route, not the raw URL (issue 39 item 4: `POST /%61pi/backup`
 * reached /api/backup past a test of `request.url`): every state-changing route except the public API's, so an
 * admin route added later is guarded without anyone listing it. The public API (`/v2/…`, `/mcp`, also under /api)
 * is authenticated by bearer keys, never by a cookie, and is called cross-site on purpose. A request no route matched
 * runs no handler: the not-found handler answers it.
 */
export async function requireSameOrigin(request: FastifyRequest): Promise<void> {
  const route = matchedRoute(request);
  if (!STATE_CHANGING.has(request.method) || route === undefined || isPublicApiRoute(route)) return;
  const site = request.headers["sec-fetch-site"];
  if (site !== undefined && site !== "same-origin" && site !== "none") throw crossSite(`Sec-Fetch-Site: ${site}`);
  const origin = request.headers.origin;
  if (origin !== undefined && origin !== `${request.protocol}://${request.headers.host}`) throw crossSite(`Origin: ${origin.slice(0, 100)}`);
  const type = (request.headers["content-type"] ?? "").split(";")[0]!.trim().toLowerCase();
  const hasBody = Number(request.headers["content-length"] ?? 0) > 0 || request.headers["transfer-encoding"] !== undefined;
  if (SIMPLE_TYPES.includes(type) || (hasBody && !ACCEPTED_TYPES.includes(type))) {
    throw new LdsError("unsupported_media_type", `The admin API takes JSON bodies (Content-Type: application/json), not ${type || "a body without a type"}.`, {
      hint: "Send the body as JSON with Content-Type: application/json (an archive upload: application/octet-stream).",
    });
  }
}

function crossSite(evidence: string): LdsError {
  return new LdsError("forbidden", `Cross-site request refused (${evidence}): the admin API answers only pages of its own origin.`, {
    hint: "Use the dashboard on this server's own address, or a command-line client.",
  });
}
