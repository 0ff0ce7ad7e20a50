import type { FastifyPluginAsync } from "fastify";
import type { JobRunner } from "../../ops/job-runner.js";
import type { OpenVolume } from "../../volume/open-volume.js";
import type { GitUrlPolicy } from "../../config/git-settings.js";
import type { Caller } from "../../store/api-keys.js";
import type { ServerSettings } from "../../config/server-settings.js";
import { createRateLimiter } from "../rate-limiter.js";
import { mcpRoutes } from "./mcp.js";
import { searchRoutes } from "./search.js";
import { submissionRoutes } from "./submissions.js";

declare module "fastify" {
  interface FastifyRequest {
    caller?: Caller;
  }
}

export interface PublicApiOptions {
  volume: OpenVolume;
  jobs: JobRunner;
  limits: ServerSettings["planLimits"];
  /** Failed authentications allowed per client address and minute (floods of bad keys). */
  unauthenticatedPerMinute: number;
  /** Refreshes per minute: by a library's owner, and by anyone else. */
  refreshLimits: { owner: number; other: number };
  gitPolicy: GitUrlPolicy;
}

/**
 * Everything a bearer API key opens: submissions, search and context, and the MCP endpoint. One hook
 * authenticates and applies the key's rate limit before any route (and before any body validation), so every
 * endpoint answers 401/429 the same way.
 */
export const publicApiRoutes: FastifyPluginAsync<PublicApiOptions> = async (app, options) => {
  const { store } = options.volume;
  const requests = createRateLimiter();
  const failures = createRateLimiter();

  app.addHook("onRequest", async (request, reply) => {
    let caller: Caller;
    try {
      caller = await store.apiKeys.authenticate(request.headers.authorization);
    } catch (err) {
      failures.hit(`ip:${request.ip}`, options.unauthenticatedPerMinute, reply);
      throw err;
    }
    requests.hit(caller.keyPrefix, options.limits[caller.plan], reply);
    request.caller = caller;
  });

  await app.register(submissionRoutes, { volume: options.volume, jobs: options.jobs, refreshLimits: options.refreshLimits, gitPolicy: options.gitPolicy });
  await app.register(searchRoutes, { volume: options.volume });
  await app.register(mcpRoutes, { volume: options.volume });
};
