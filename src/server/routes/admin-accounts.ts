import type { FastifyPluginAsync } from "fastify";
import type { Plan, Role, User } from "../../store/records.js";
import type { OpenVolume } from "../../volume/open-volume.js";
import { adminActor } from "../../ops/actor.js";
import { createKey, revokeKey } from "../../ops/api-keys.js";
import { changeTeamPlan, createTeam } from "../../ops/teams.js";
import { addUser, removeUser } from "../../ops/users.js";
import { requireAdmin } from "../admin-session.js";
import type { AccountTeam, AccountUser, KeyListing, KeyRevoked, NewApiKey, TeamListing, UserListing, UserRemoved } from "../api-types.js";

const PLANS = ["free", "pro", "enterprise"];

/** A user as the API names it (`team_id`, as since 0.3), in the order its fields have always been sent. */
const accountUser = (user: User, team: string): AccountUser => ({ id: user.id, team_id: user.teamId, email: user.email, role: user.role, team });
const ROLES = ["owner", "admin", "member"];
const object = (required: string[], properties: Record<string, object>) => ({ body: { type: "object", additionalProperties: false, required, properties } });
const teamName = { type: "string", minLength: 1, maxLength: 64, pattern: "^[A-Za-z0-9][A-Za-z0-9._-]*$" };
const email = { type: "string", minLength: 3, maxLength: 254 };

/**
 * Teams, users and API keys for operators (the dashboard; the CLI's lds teams/users/keys do the same through the
 * same use cases, ops/teams.ts, users.ts, api-keys.ts). Every change is audit-logged there with the admin who made
 * it; a new key's secret is in the one answer that creates it, never again.
 */
export const accountRoutes: FastifyPluginAsync<{ volume: OpenVolume }> = async (app, { volume }) => {
  const { store } = volume;
  app.addHook("onRequest", requireAdmin(store));

  app.get("/api/teams", async (): Promise<TeamListing> => {
    const users = await store.users.list();
    const teams = await store.teams.list();
    return { teams: teams.map((t) => ({ ...t, users: users.filter((u) => u.teamId === t.id).length })) };
  });

  app.post<{ Body: { name: string; plan: Plan }; Reply: AccountTeam }>("/api/teams", { schema: object(["name", "plan"], { name: teamName, plan: { enum: PLANS } }) }, async (request, reply) => {
    const team = await createTeam(store, adminActor(request.admin!.username), request.body.name, request.body.plan);
    return reply.status(201).send(team);
  });

  app.patch<{ Params: { team: string }; Body: { plan: Plan } }>("/api/teams/:team", { schema: object(["plan"], { plan: { enum: PLANS } }) }, async (request): Promise<AccountTeam> => {
    return changeTeamPlan(store, adminActor(request.admin!.username), request.params.team, request.body.plan);
  });

  app.get("/api/users", async (): Promise<UserListing> => ({ users: (await store.users.list()).map((u) => accountUser(u, u.team)) }));

  app.post<{ Body: { team: string; email: string; role: Role }; Reply: AccountUser }>(
    "/api/users",
    { schema: object(["team", "email", "role"], { team: { type: "string", minLength: 1, maxLength: 64 }, email, role: { enum: ROLES } }) },
    async (request, reply) => {
      const { user, team } = await addUser(store, adminActor(request.admin!.username), request.body.team, request.body.email, request.body.role);
      return reply.status(201).send(accountUser(user, team.name));
    },
  );

  app.delete<{ Params: { email: string } }>("/api/users/:email", async (request): Promise<UserRemoved> => {
    const user = await removeUser(store, adminActor(request.admin!.username), request.params.email);
    return { removed: user.email };
  });

  app.get("/api/keys", async (): Promise<KeyListing> => ({ keys: await store.apiKeys.list() }));

  app.post<{ Body: { email: string; name?: string }; Reply: NewApiKey }>("/api/keys", { schema: object(["email"], { email, name: { type: "string", maxLength: 100 } }) }, async (request, reply) => {
    const created = await createKey(store, adminActor(request.admin!.username), request.body.email, request.body.name || null);
    // The only time the secret leaves the server: the dashboard shows it once with a copy button.
    return reply.status(201).header("Cache-Control", "no-store").send(created);
  });

  app.delete<{ Params: { prefix: string } }>("/api/keys/:prefix", async (request): Promise<KeyRevoked> => {
    await revokeKey(store, adminActor(request.admin!.username), request.params.prefix);
    return { revoked: request.params.prefix };
  });
};
