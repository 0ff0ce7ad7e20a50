import type { FastifyPluginAsync } from "fastify";
import type { GitUrlPolicy } from "../../config/git-settings.js";
import { LdsError } from "../../errors.js";
import { adminActor } from "../../ops/actor.js";
import type { JobRunner } from "../../ops/job-runner.js";
import { operatorCallerFor, operatorCallerForLibrary } from "../../ops/operator-caller.js";
import { refreshLibrary } from "../../ops/refresh-library.js";
import { removeLibrary } from "../../ops/remove-library.js";
import { submitRepository, type RepositorySubmission } from "../../ops/submit-repository.js";
import { summarise } from "../../search/library-summary.js";
import type { OpenVolume } from "../../volume/open-volume.js";
import { requireAdmin } from "../admin-session.js";
import type { AdminLibrary, LibraryListing, LibraryRemoved, RefreshStarted, SubmissionAnswer } from "../api-types.js";
import { REPOSITORY_FIELDS } from "./submissions.js";

export interface AdminLibraryOptions {
  volume: OpenVolume;
  jobs: JobRunner;
  gitPolicy: GitUrlPolicy;
}

/** An operator is not charged refreshes: the limits protect the server from clients, not from its operator. */
const uncharged = async () => {};

/**
 * Libraries for operators: every library of every team with its processing state, and submit, refresh and remove
 * through the same use cases as the public API (an operator acts for a team, as its owner).
 */
export const adminLibraryRoutes: FastifyPluginAsync<AdminLibraryOptions> = async (app, { volume, jobs, gitPolicy }) => {
  const { store } = volume;
  app.addHook("onRequest", requireAdmin(store));

  app.get("/api/libraries", async (): Promise<LibraryListing> => {
    const teams = new Map((await store.teams.list()).map((t) => [t.id, t.name]));
    const rows = await store.libraries.list();
    const libraries = await Promise.all(
      rows.map(async (row): Promise<AdminLibrary> => {
        const summary = await summarise(store, row);
        return {
          id: row.id,
          title: row.title,
          source: row.source,
          sourceUrl: row.sourceUrl,
          private: row.private,
          team: row.teamId === null ? null : (teams.get(row.teamId) ?? null),
          processing: row.state,
          reason: row.stateReason,
          totalSnippets: summary.totalSnippets,
          branch: summary.branch,
          versions: summary.versions,
          lastUpdateDate: summary.lastUpdateDate,
        };
      }),
    );
    return { libraries };
  });

  app.post<{ Body: RepositorySubmission & { team: string }; Reply: SubmissionAnswer }>(
    "/api/libraries",
    {
      schema: {
        body: {
          type: "object",
          additionalProperties: false,
          required: ["team", "docsRepoUrl"],
          properties: {
            team: { type: "string", minLength: 1, maxLength: 64 },
            docsRepoUrl: REPOSITORY_FIELDS.docsRepoUrl,
            gitToken: REPOSITORY_FIELDS.gitToken,
            private: REPOSITORY_FIELDS.private,
            branch: REPOSITORY_FIELDS.branch,
          },
        },
      },
    },
    async (request, reply) => {
      const { team, ...submission } = request.body;
      const caller = await operatorCallerFor(store, team);
      const answer = await submitRepository({ volume, caller, policy: gitPolicy, chargeRefresh: uncharged }, submission);
      jobs.kick();
      request.log.info({ library: answer.libraryName, private: Boolean(submission.private), by: `admin:${request.admin!.username}` }, "repository submitted");
      return reply.status(202).send(answer);
    },
  );

  app.post<{ Body: { libraryName: string; branch?: string }; Reply: RefreshStarted }>(
    "/api/libraries/refresh",
    {
      schema: {
        body: {
          type: "object",
          additionalProperties: false,
          required: ["libraryName"],
          properties: { libraryName: { type: "string", minLength: 1, maxLength: 500 }, branch: REPOSITORY_FIELDS.branch },
        },
      },
    },
    async (request, reply) => {
      const library = await store.libraries.find(request.body.libraryName);
      if (!library) throw new LdsError("library_not_found", `No library ${request.body.libraryName}.`);
      const answer = await refreshLibrary(volume, await operatorCallerForLibrary(store, library), request.body, uncharged);
      jobs.kick();
      return reply.status(202).send(answer);
    },
  );

  app.delete<{ Querystring: { id: string } }>(
    "/api/libraries",
    { schema: { querystring: { type: "object", required: ["id"], properties: { id: { type: "string", minLength: 1, maxLength: 500 } } } } },
    async (request): Promise<LibraryRemoved> => {
      const removed = await removeLibrary(volume, adminActor(request.admin!.username), request.query.id);
      request.log.warn({ library: request.query.id, by: request.admin!.username }, "library removed");
      return { removed: request.query.id, ...removed };
    },
  );
};
