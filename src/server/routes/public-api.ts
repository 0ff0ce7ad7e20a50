import type { FastifyPluginAsync, FastifyReply, FastifyRequest } from "fastify";
import { isLdsError } from "../../errors.js";
import type { JobRunner } from "../../ops/job-runner.js";
import type { OpenVolume } from "../../volume/open-volume.js";
import type { GitUrlPolicy } from "../../config/git-settings.js";
import { ANONYMOUS_ACCESS, callerAccess, type LibraryAccess } from "../../search/library-access.js";
import type { Caller } from "../../store/records.js";
import type { ServerSettings } from "../../config/server-settings.js";
import { isAnonymousRead, matchedRoute } from "../public-paths.js";
import type { UsageRecorder } from "../../ops/usage-recorder.js";
import { createRateLimiter } from "../rate-limiter.js";
import { mcpRoutes } from "./mcp.js";
import { policyRoutes } from "./policies.js";
import { searchRoutes } from "./search.js";
import { submissionRoutes } from "./submissions.js";

declare module "fastify" {
  interface FastifyRequest {
    /** The key's caller; undefined for an anonymous read (LDS_PUBLIC_READ). */
    caller?: Caller;
    /** What the caller may read: its team's view, or public libraries only when anonymous. */
    access?: LibraryAccess;
  }
}

export interface PublicApiOptions {
  volume: OpenVolume;
  jobs: JobRunner;
  limits: ServerSettings["planLimits"];
  /** Failed authentications allowed per client address and minute (floods of bad keys). */
  unauthenticatedPerMinute: number;
  /** Anonymous reads of public libraries, per client address and minute; off unless `publicRead`. */
  publicRead: boolean;
  anonymousPerMinute: number;
  /** Refreshes per minute: by a library's owner, and by anyone else. */
  refreshLimits: { owner: number; other: number };
  gitPolicy: GitUrlPolicy;
  /** Counts answered context requests per library (GET /v2/libs/metrics). */
  usage: UsageRecorder;
}

/** The hosted service's clients send the key in one of these; `Authorization: Bearer` is the documented one. */
function presentedKey(request: FastifyRequest): string | undefined {
  const { authorization } = request.headers;
  if (authorization) return authorization;
  const alternative = request.headers["context7-api-key"] ?? request.headers["x-api-key"];
  const key = Array.isArray(alternative) ? alternative[0] : alternative;
  return key ? `Bearer ${key.trim()}` : undefined;
}

/**
 * Everything a bearer API key opens: submissions, search and context, and the MCP endpoint, at `/v2/…` and again at
 * `/api/v2/…` (same handlers, same limits: the counters are shared). One hook authenticates and applies the key's
 * rate limit before any route (and before any body validation), so every endpoint answers 401/429 the same way.
 */
export const publicApiRoutes: FastifyPluginAsync<PublicApiOptions> = async (app, options) => {
  const { store } = options.volume;
  const requests = createRateLimiter(store.requestWindows, "requests");
  const failures = createRateLimiter(store.requestWindows, "failures");
  const anonymous = createRateLimiter(store.requestWindows, "anonymous");
  const refreshes = createRateLimiter(store.requestWindows, "refreshes");

  const authenticate = async (request: FastifyRequest, reply: FastifyReply) => {
    const key = presentedKey(request);
    if (!key && options.publicRead && isAnonymousRead(request.method, matchedRoute(request))) {
      await anonymous.hit(`anonymous:${request.ip}`, options.anonymousPerMinute, reply);
      request.access = ANONYMOUS_ACCESS;
      return;
    }
    let caller: Caller;
    try {
      caller = await store.apiKeys.authenticate(key);
    } catch (err) {
      // RFC 9110: a 401 names the scheme it wants (MCP clients read it to know that a key is missing).
      if (isLdsError(err, "invalid_api_key")) reply.header("WWW-Authenticate", 'Bearer realm="LDS"');
      await failures.hit(`ip:${request.ip}`, options.unauthenticatedPerMinute, reply);
      throw err;
    }
    // The key's window is charged while its team's policy is read: two round trips at once on a shared database,
    // on every request (a refusal of either still ends the request).
    const [, access] = await Promise.all([requests.hit(caller.keyPrefix, options.limits[caller.plan], reply), callerAccess(store, caller)]);
    request.caller = caller;
    request.access = access;
  };

  const routes: FastifyPluginAsync = async (scope) => {
    scope.addHook("onRequest", authenticate);
    await scope.register(submissionRoutes, { volume: options.volume, jobs: options.jobs, refreshLimits: options.refreshLimits, refreshes, gitPolicy: options.gitPolicy });
    await scope.register(searchRoutes, { volume: options.volume, usage: options.usage });
    await scope.register(mcpRoutes, { volume: options.volume, usage: options.usage });
    await scope.register(policyRoutes, { volume: options.volume });
  };
  await app.register(routes);
  await app.register(routes, { prefix: "/api" });
};
