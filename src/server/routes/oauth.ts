import type { FastifyPluginAsync, FastifyRequest } from "fastify";
import { LdsError } from "../../errors.js";
import { loadProviderConfig, usableProvider } from "../../oauth/provider-config.js";
import { CALLBACK_PATH, startAuthorization, type CallbackQuery } from "../../oauth/flow.js";
import { isProviderKind, PROVIDERS, providerOf, type ProviderKind } from "../../oauth/providers.js";
import { OAuthFailure } from "../../oauth/failure.js";
import { grantAccessToken } from "../../oauth/tokens.js";
import type { OpenVolume } from "../../volume/open-volume.js";
import { adminActor } from "../../ops/actor.js";
import { changeProviderSettings, connectOAuthAccount, disconnectOAuthGrant } from "../../ops/oauth-connections.js";
import { requireAdmin } from "../admin-session.js";
import { connectOutcomes } from "../connect-outcomes.js";
import type { AuthorizationStarted, BrowseListing, ConnectedAccount, ConnectionListing, Disconnected, ProviderListing, ProviderSettings } from "../api-types.js";

const origin = (request: FastifyRequest) => `${request.protocol}://${request.host}`;

function kindOf(value: string): ProviderKind {
  if (!isProviderKind(value)) throw new LdsError("route_not_found", `No OAuth provider ${value.slice(0, 40)}; there are ${PROVIDERS.map((p) => p.kind).join(", ")}.`);
  return value;
}

const url = { type: "string", maxLength: 2048, pattern: "^https?://[^\\s]+$" };

/**
 * Connected accounts (docs/admin-api.md, "Connections"): the providers' settings, Connect (authorization code with
 * PKCE), the callback, the grants with Disconnect and browsing. All behind the admin session except the callback,
 * which arrives from the provider's site without the SameSite=Strict cookie: its single-use state is its proof.
 */
export const oauthRoutes: FastifyPluginAsync<{ volume: OpenVolume }> = async (app, { volume }) => {
  const { store } = volume;

  const outcomes = connectOutcomes();

  // The redirect carries codes only, each from a fixed list (a success: the id of the outcome kept above; a
  // failure: the error code, its reason and the provider's kind): the page words them itself, so an address that
  // anyone can write puts no text of theirs on it. The messages, with the provider's own words, go to the log.
  app.get<{ Querystring: CallbackQuery }>(CALLBACK_PATH, async (request, reply) => {
    const back = new URLSearchParams();
    try {
      const result = await connectOAuthAccount(store, request.query);
      if ("connected" in result) {
        const done = result.connected;
        request.log.info({ provider: done.provider, team: done.teamId, account: done.account }, "account connected");
        back.set("connected", outcomes.remember({ provider: done.provider, teamId: done.teamId, account: done.account }));
      } else {
        const { error, provider } = result.failed;
        const reason = error instanceof OAuthFailure ? error.reason : undefined;
        request.log.warn({ code: error.code, reason, provider, message: error.message }, "OAuth connection failed");
        back.set("error", error.code);
        if (reason) back.set("reason", reason);
        if (provider) back.set("provider", provider);
      }
    } catch (err) {
      request.log.error({ err }, "OAuth callback failed unexpectedly");
      back.set("error", "internal_error");
    }
    return reply.redirect(`/dashboard/connections?${back}`, 303);
  });

  app.register(async (admin) => {
    admin.addHook("onRequest", requireAdmin(store));

    admin.get("/api/oauth/providers", async (request): Promise<ProviderListing> => ({
      redirectUri: `${origin(request)}${CALLBACK_PATH}`,
      providers: await Promise.all(PROVIDERS.map(async (p) => ({ kind: p.kind, name: p.name, connects: p.connects, defaults: p.defaults, ...(await loadProviderConfig(store, p.kind)) }))),
    }));

    admin.put<{ Params: { kind: string }; Body: Record<string, unknown> }>(
      "/api/oauth/providers/:kind",
      {
        schema: {
          body: {
            type: "object",
            additionalProperties: false,
            properties: {
              clientId: { type: "string", maxLength: 256 },
              clientSecret: { type: "string", maxLength: 1024 },
              authorizeUrl: url,
              tokenUrl: url,
              apiBase: url,
              scopes: { type: "string", maxLength: 1024 },
              gitHosts: { type: "array", maxItems: 16, items: { type: "string", pattern: "^[A-Za-z0-9.-]+(:\\d{1,5})?$" } },
            },
          },
        },
      },
      async (request): Promise<ProviderSettings> => {
        const kind = kindOf(request.params.kind);
        await changeProviderSettings(store, adminActor(request.admin!.username), kind, request.body);
        return loadProviderConfig(store, kind);
      },
    );

    admin.post<{ Params: { kind: string }; Body: { team: string } }>(
      "/api/oauth/:kind/start",
      { schema: { body: { type: "object", additionalProperties: false, required: ["team"], properties: { team: { type: "string", minLength: 1, maxLength: 64 } } } } },
      async (request): Promise<AuthorizationStarted> => startAuthorization(store, { kind: kindOf(request.params.kind), team: request.body.team, origin: origin(request), startedBy: request.admin!.username }),
    );

    admin.get<{ Params: { id: string } }>("/api/oauth/connected/:id", async (request): Promise<ConnectedAccount> => {
      const outcome = outcomes.recall(request.params.id);
      if (!outcome) throw new LdsError("connection_not_found", "No account was connected under this id in the last 10 minutes (or the server restarted since).", { hint: "See the list of connected accounts." });
      const team = (await store.teams.list()).find((t) => t.id === outcome.teamId);
      return { provider: outcome.provider, providerName: isProviderKind(outcome.provider) ? providerOf(outcome.provider).name : outcome.provider, account: outcome.account, team: team?.name ?? null };
    });

    admin.get("/api/connections", async (): Promise<ConnectionListing> => {
      const teams = new Map((await store.teams.list()).map((t) => [t.id, t.name]));
      return { connections: (await store.oauth.list()).map((g) => ({ ...g, team: teams.get(g.teamId) ?? null, providerName: isProviderKind(g.provider) ? providerOf(g.provider).name : g.provider })) };
    });

    admin.get<{ Params: { id: string } }>("/api/connections/:id/browse", async (request): Promise<BrowseListing> => {
      const grant = await store.oauth.find(Number(request.params.id));
      if (!grant || !isProviderKind(grant.provider)) throw new LdsError("connection_not_found", `No connection ${request.params.id.slice(0, 20)}.`);
      const { config } = await usableProvider(store, grant.provider);
      const token = await grantAccessToken(store, grant.id);
      return { items: await providerOf(grant.provider).browse(config, token, grant) };
    });

    admin.delete<{ Params: { id: string } }>("/api/connections/:id", async (request): Promise<Disconnected> => {
      return disconnectOAuthGrant(store, adminActor(request.admin!.username), Number(request.params.id));
    });
  });
};
