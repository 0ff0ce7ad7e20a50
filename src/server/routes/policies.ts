import type { FastifyPluginAsync } from "fastify";
import { readTeamPolicy, updateTeamPolicy } from "../../ops/team-policy.js";
import type { OpenVolume } from "../../volume/open-volume.js";

/** GET and PATCH /v2/policies: the access policy of the key's team (docs/api.md, "Access policies"). */
export const policyRoutes: FastifyPluginAsync<{ volume: OpenVolume }> = async (app, { volume }) => {
  app.get("/v2/policies", async (request) => readTeamPolicy(volume.store, request.caller!));
  app.patch("/v2/policies", async (request) => updateTeamPolicy(volume.store, request.caller!, request.body));
};
