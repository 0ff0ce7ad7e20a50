import type { FastifyPluginAsync, FastifyReply } from "fastify";
import type { JobRunner } from "../../ops/job-runner.js";
import type { OpenVolume } from "../../volume/open-volume.js";
import { refreshLibrary } from "../../ops/refresh-library.js";
import { submitRepository, type RepositorySubmission } from "../../ops/submit-repository.js";
import { submitWikiSpace, type WikiSubmission } from "../../ops/submit-wiki.js";
import type { GitUrlPolicy } from "../../config/git-settings.js";
import type { Caller } from "../../store/records.js";
import type { RateLimiter } from "../rate-limiter.js";

export interface SubmissionOptions {
  volume: OpenVolume;
  jobs: JobRunner;
  /** Refreshes per minute: by a library's owner, and by anyone else. */
  refreshLimits: { owner: number; other: number };
  /** The refresh counters, shared by the routes at /v1/… and /api/v1/…. */
  refreshes: RateLimiter;
  gitPolicy: GitUrlPolicy;
}

/** The fields of a repository submission and of a refresh, shared with the dashboard's routes (admin-libraries.ts). */
export const REPOSITORY_FIELDS = {
  docsRepoUrl: { type: "string", minLength: 1, maxLength: 2048 },
  gitToken: { type: "string", minLength: 1, maxLength: 1024 },
  private: { type: "boolean" },
  skipVersionFiltering: { type: "boolean" },
  generateDocs: { type: "boolean" },
  branch: { type: "string", minLength: 1, maxLength: 255 },
} as const;

/** The public submission API of the spec: add a repository or wiki space, refresh a library (docs/api.md). */
export const submissionRoutes: FastifyPluginAsync<SubmissionOptions> = async (app, options) => {
  const { refreshes } = options;

  app.post<{ Body: RepositorySubmission }>(
    "/v2/add/repo/hostb",
    {
      schema: {
        body: {
          type: "object",
          required: ["docsRepoUrl"],
          properties: REPOSITORY_FIELDS,
        },
      },
    },
    async (request, reply) => {
      const caller = request.caller!;
      const answer = await submitRepository({ volume: options.volume, caller, policy: options.gitPolicy, chargeRefresh: charge(caller, reply) }, request.body);
      options.jobs.kick();
      request.log.info({ library: answer.libraryName, private: Boolean(request.body.private), by: caller.keyPrefix }, "repository submitted");
      return answer;
    },
  );

  app.post<{ Body: WikiSubmission }>(
    "/v2/add/wiki",
    {
      schema: {
        body: {
          type: "object",
          required: ["cloudId", "siteUrl", "spaceKey", "spaceName", "title", "description", "projectId"],
          properties: {
            cloudId: { type: "string", pattern: "^[A-Za-z0-9-]{1,64}$" },
            siteUrl: { type: "string", pattern: "^https?://[^\\s/]+/?$" },
            spaceKey: { type: "string", pattern: "^[A-Za-z0-9_~-]{1,255}$" },
            spaceName: { type: "string", minLength: 1, maxLength: 255 },
            title: { type: "string", minLength: 1, maxLength: 255 },
            description: { type: "string", maxLength: 2000 },
            projectId: { type: "string", minLength: 1, maxLength: 128 },
            pageIds: { type: "array", maxItems: 1000, items: { type: "string", pattern: "^[0-9]{1,20}$" } },
          },
        },
      },
    },
    async (request) => {
      const answer = await submitWikiSpace(options.volume, request.caller!, request.body);
      options.jobs.kick();
      return answer;
    },
  );

  app.post<{ Body: { libraryName: string; branch?: string; gitToken?: string } }>(
    "/v1/refresh",
    {
      schema: {
        body: {
          type: "object",
          required: ["libraryName"],
          properties: { libraryName: { type: "string", maxLength: 512 }, branch: REPOSITORY_FIELDS.branch, gitToken: REPOSITORY_FIELDS.gitToken },
        },
      },
    },
    async (request, reply) => {
      const caller = request.caller!;
      const answer = await refreshLibrary(options.volume, caller, request.body, charge(caller, reply));
      options.jobs.kick();
      return answer;
    },
  );

  /** Refreshes count against the caller's refresh limit: the owner's own, or everyone else's. */
  function charge(caller: Caller, reply: FastifyReply) {
    return async (isOwner: boolean) => {
      const limit = isOwner ? options.refreshLimits.owner : options.refreshLimits.other;
      await refreshes.hit(`${caller.keyPrefix}:${isOwner ? "owner" : "other"}`, limit, reply);
    };
  }
};
