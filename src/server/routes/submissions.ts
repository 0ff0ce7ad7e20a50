import type { FastifyPluginAsync } from "fastify";
import { isLdsError, LdsError } from "../../errors.js";
import type { JobRunner } from "../../ops/job-runner.js";
import type { OpenVolume } from "../../ops/open-volume.js";
import { checkRepositoryUrl, type GitUrlPolicy } from "../../sources/git-url.js";
import { teamMayUse } from "../../store/accounts.js";
import { enqueueJob, type WikiJobPayload } from "../../store/jobs.js";
import { getSetting, setSetting } from "../../store/settings.js";
import { findWikiConnection, normalise, teamHasProject } from "../../store/connections.js";
import { accessDenied, callerAccess } from "../../search/library-access.js";
import { createRateLimiter } from "../rate-limiter.js";

export interface SubmissionOptions {
  volume: OpenVolume;
  jobs: JobRunner;
  /** Refreshes per minute: by a library's owner, and by anyone else. */
  refreshLimits: { owner: number; other: number };
  gitPolicy: GitUrlPolicy;
}

const LIBRARY_ID = /^\/[A-Za-z0-9._-]+\/[A-Za-z0-9._@-]+(\/[A-Za-z0-9._-]+)?$/;

/** The public submission API of the spec: add a repository or wiki space, refresh a library (docs/api.md). */
export const submissionRoutes: FastifyPluginAsync<SubmissionOptions> = async (app, options) => {
  const { db, key } = options.volume;
  const refreshes = createRateLimiter();

  app.post<{ Body: { docsRepoUrl: string; gitToken?: string; private?: boolean; skipVersionFiltering?: boolean; generateDocs?: boolean } }>(
    "/v2/add/repo/hostb",
    {
      schema: {
        body: {
          type: "object",
          required: ["docsRepoUrl"],
          properties: {
            docsRepoUrl: { type: "string", minLength: 1, maxLength: 2048 },
            gitToken: { type: "string", minLength: 1, maxLength: 1024 },
            private: { type: "boolean" },
            skipVersionFiltering: { type: "boolean" },
            generateDocs: { type: "boolean" },
          },
        },
      },
    },
    async (request) => {
      const caller = request.caller!;
      const body = request.body;
      const { url, libraryId } = repositoryUrl(body.docsRepoUrl, options.gitPolicy);
      if (body.generateDocs && !body.private) {
        throw new LdsError("validation_error", "generateDocs applies to private repository submissions only.", { hint: "Add \"private\": true, or leave generateDocs out." });
      }
      if (body.private) {
        if (caller.role === "member") throw new LdsError("forbidden", "Only team owners and admins can add private repositories.");
        if (caller.plan === "free") throw new LdsError("forbidden", "Your plan does not allow private repositories: a Pro plan or a team is required.");
      }
      const existing = db.prepare("SELECT team_id, private FROM libraries WHERE id = ?").get(libraryId) as { team_id: number | null; private: number } | undefined;
      if (existing && (body.private || existing.private)) {
        throw new LdsError("duplicate_repo", `The repository ${libraryId} is already a library${existing.team_id === caller.teamId ? " of your team" : ""}.`, {
          hint: `Refresh it with POST /v1/refresh {"libraryName": "${libraryId}"}.`,
        });
      }
      if (!teamMayUse(db, caller.teamId, libraryId)) throw accessDenied(libraryId);
      db.transaction(() => {
        db.prepare(
          `INSERT INTO libraries (id, team_id, title, source, source_url, private, owner_user_id, state)
           VALUES (?, ?, ?, 'git', ?, ?, ?, 'queued') ON CONFLICT(id) DO UPDATE SET state = 'queued'`,
        ).run(libraryId, body.private ? caller.teamId : null, libraryId.split("/").pop(), url.href, body.private ? 1 : 0, caller.userId);
        // Kept for refreshes, which must index the library the way it was submitted.
        setSetting(db, `library.options:${libraryId}`, JSON.stringify({ skipVersionFiltering: body.skipVersionFiltering, generateDocs: body.generateDocs }));
        enqueueJob(db, key, { library_id: libraryId, kind: "ingest", payload: { url: url.href, skipVersionFiltering: body.skipVersionFiltering, generateDocs: body.generateDocs, teamId: caller.teamId } }, body.gitToken);
      })();
      options.jobs.kick();
      request.log.info({ library: libraryId, private: Boolean(body.private), by: caller.keyPrefix }, "repository submitted");
      return { libraryName: libraryId, message: `Repository ${libraryId} was submitted for processing.` };
    },
  );

  app.post<{ Body: { cloudId: string; siteUrl: string; spaceKey: string; spaceName: string; title: string; description: string; projectId: string; pageIds?: string[] } }>(
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
      const caller = request.caller!;
      const body = request.body;
      if (!teamHasProject(db, caller.teamId, body.projectId)) {
        throw new LdsError("team_not_found", `Project ${body.projectId} is not a project of your team.`, { hint: "An operator adds projects with `lds teams add-project`." });
      }
      const connection = findWikiConnection(db, caller.teamId, body.cloudId);
      if (!connection) {
        throw new LdsError("forbidden", `Your team has no wiki account connected for cloud ${body.cloudId}.`, { hint: "An operator connects one with `lds connections add-wiki`." });
      }
      if (normalise(body.siteUrl) !== connection.siteUrl) {
        throw new LdsError("validation_error", `siteUrl ${body.siteUrl} is not the site of the connected wiki account.`);
      }
      const libraryId = `/wiki/${body.spaceKey.toLowerCase()}`;
      if (!teamMayUse(db, caller.teamId, libraryId)) throw accessDenied(libraryId);
      if (db.prepare("SELECT 1 FROM libraries WHERE id = ?").get(libraryId)) {
        throw new LdsError("duplicate_repo", `The wiki space ${body.spaceKey} is already a library (${libraryId}).`, { hint: `Refresh it with POST /v1/refresh {"libraryName": "${libraryId}"}.` });
      }
      const origin = `confluence://${body.cloudId}/${body.spaceKey}${body.pageIds?.length ? `?pages=${body.pageIds.join(",")}` : ""}`;
      db.transaction(() => {
        db.prepare(
          `INSERT INTO libraries (id, team_id, title, description, source, source_url, private, owner_user_id, state)
           VALUES (?, ?, ?, ?, 'wiki', ?, 1, ?, 'queued')`,
        ).run(libraryId, caller.teamId, body.title, body.description, origin, caller.userId);
        enqueueJob(db, key, { library_id: libraryId, kind: "ingest", payload: wikiPayloadOf(origin, caller.teamId) });
      })();
      options.jobs.kick();
      return { libraryName: libraryId, message: `Wiki space ${body.spaceKey} was submitted for processing.` };
    },
  );

  app.post<{ Body: { libraryName: string; branch?: string; gitToken?: string } }>(
    "/v1/refresh",
    {
      schema: {
        body: {
          type: "object",
          required: ["libraryName"],
          properties: { libraryName: { type: "string", maxLength: 512 }, branch: { type: "string", minLength: 1, maxLength: 255 }, gitToken: { type: "string", minLength: 1, maxLength: 1024 } },
        },
      },
    },
    async (request, reply) => {
      const caller = request.caller!;
      const { libraryName, branch, gitToken } = request.body;
      if (!LIBRARY_ID.test(libraryName)) {
        throw new LdsError("invalid_library_id", `"${libraryName.slice(0, 100)}" is not a library id of the form /owner/repo or /<source>/<id>.`);
      }
      const library = db.prepare("SELECT id, team_id, private, source, source_url, branches, owner_user_id FROM libraries WHERE id = ?").get(libraryName) as
        | { id: string; team_id: number | null; private: number; source: string; source_url: string; branches: string; owner_user_id: number | null }
        | undefined;
      // The same visibility rules as search and context: another team's private library does not exist for the caller.
      const access = callerAccess(db, caller);
      if (!library || !access.canSee(library)) {
        throw new LdsError("library_not_found", `No library ${libraryName} (or no access to it).`, { hint: "Submit it first with POST /v2/add/repo/hostb." });
      }
      if (!access.mayUse(libraryName)) throw accessDenied(libraryName);
      if (library.private && caller.plan === "free") throw new LdsError("forbidden", "Private sources require a Pro or Enterprise plan.");
      const known = (JSON.parse(library.branches) as Array<{ name: string }>).map((b) => b.name);
      if (branch && !known.includes(branch)) {
        throw new LdsError("branch_not_found", `The branch "${branch}" is not part of ${libraryName}; added branches: ${known.join(", ") || "none yet"}.`);
      }
      const isOwner = library.owner_user_id === caller.userId;
      refreshes.hit(`${caller.keyPrefix}:${isOwner ? "owner" : "other"}`, isOwner ? options.refreshLimits.owner : options.refreshLimits.other, reply);
      const submitted = JSON.parse(getSetting(db, `library.options:${libraryName}`) ?? "{}") as { skipVersionFiltering?: boolean; generateDocs?: boolean };
      const payload = library.source === "wiki" ? wikiPayloadOf(library.source_url, caller.teamId) : { url: library.source_url, branch, teamId: caller.teamId, ...submitted };
      enqueueJob(db, key, { library_id: libraryName, kind: "refresh", payload }, gitToken);
      options.jobs.kick();
      return { message: `Refresh of ${libraryName}${branch ? ` (${branch})` : ""} started.` };
    },
  );
};

/** Wiki libraries keep their origin as confluence://<cloudId>/<spaceKey>[?pages=1,2]. */
function wikiPayloadOf(sourceUrl: string, teamId: number): WikiJobPayload {
  const url = new URL(sourceUrl);
  const pages = url.searchParams.get("pages");
  return { source: "wiki", teamId, cloudId: url.host, spaceKey: url.pathname.slice(1), pageIds: pages ? pages.split(",") : undefined };
}

function repositoryUrl(raw: string, policy: GitUrlPolicy) {
  try {
    return checkRepositoryUrl(raw, policy);
  } catch (err) {
    if (isLdsError(err, "repository_url_invalid")) throw new LdsError("validation_error", `docsRepoUrl: ${err.message}`);
    throw err;
  }
}
