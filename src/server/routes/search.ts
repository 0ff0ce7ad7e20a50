import type { FastifyPluginAsync } from "fastify";
import { isLdsError } from "../../errors.js";
import type { OpenVolume } from "../../volume/open-volume.js";
import { buildContext, contextAsJson } from "../../search/context.js";
import { CONTEXT_TOKENS } from "../../search/context-budget.js";
import { contextAsText } from "../../search/context-text.js";
import { searchLibraries } from "../../search/library-search.js";
import type { UsageRecorder } from "../../ops/usage-recorder.js";
import { libraryMetrics } from "../../ops/library-metrics.js";
import { clientOf } from "../client-kind.js";

/** Library search and context retrieval, in the shapes of the hosted services' public API (docs/api.md). */
export const searchRoutes: FastifyPluginAsync<{ volume: OpenVolume; usage: UsageRecorder }> = async (app, { volume, usage }) => {
  app.get<{ Querystring: { libraryName: string; query?: string; limit?: number } }>(
    "/v2/libs/search",
    {
      schema: {
        querystring: {
          type: "object",
          required: ["libraryName"],
          properties: {
            libraryName: { type: "string", minLength: 1, maxLength: 500 },
            query: { type: "string", maxLength: 2000 },
            limit: { type: "integer", minimum: 1, maximum: 50 },
          },
        },
      },
    },
    async (request) => {
      const access = request.access!;
      return { results: await searchLibraries(volume.store, volume.index, access, request.query), searchFilterApplied: access.restricted };
    },
  );

  app.get<{ Querystring: { libraryId: string; days: number } }>(
    "/v2/libs/metrics",
    {
      schema: {
        querystring: {
          type: "object",
          required: ["libraryId"],
          properties: { libraryId: { type: "string", minLength: 1, maxLength: 512 }, days: { type: "integer", minimum: 1, maximum: 365, default: 30 } },
        },
      },
    },
    async (request) => libraryMetrics(volume.store, request.access!, request.query.libraryId, request.query.days),
  );

  app.get<{ Querystring: { libraryId: string; query: string; type: "json" | "txt"; tokens: number } }>(
    "/v2/context",
    {
      schema: {
        querystring: {
          type: "object",
          required: ["libraryId", "query"],
          properties: {
            libraryId: { type: "string", minLength: 1, maxLength: 512 },
            query: { type: "string", minLength: 1, maxLength: 2000 },
            // Text by default, as the hosted service answers: its MCP server sends no type and hands the body to the agent.
            type: { type: "string", enum: ["json", "txt"], default: "txt" },
            tokens: { type: "integer", minimum: CONTEXT_TOKENS.min, maximum: CONTEXT_TOKENS.max, default: CONTEXT_TOKENS.default },
          },
        },
      },
    },
    async (request, reply) => {
      const { libraryId, query, type, tokens } = request.query;
      try {
        const answer = await buildContext(volume, request.access!, { libraryId, query, tokens });
        usage.record({ libraryId: answer.libraryId, query, ...clientOf(request) });
        if (type === "txt") return reply.type("text/plain; charset=utf-8").send(contextAsText(answer));
        return contextAsJson(answer);
      } catch (err) {
        // A text client shows the body as it is: "still processing" reads as a sentence there, not as JSON.
        if (type === "txt" && isLdsError(err, "library_not_finalized")) return reply.status(err.status).type("text/plain; charset=utf-8").send(`${err.message}\n`);
        throw err;
      }
    },
  );
};
