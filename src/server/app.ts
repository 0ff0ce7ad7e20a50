import cookie from "@fastify/cookie";
import rateLimit from "@fastify/rate-limit";
import Fastify, { type FastifyBaseLogger, type FastifyInstance } from "fastify";
import type { Logger } from "pino";
import { LdsError, fromSystemError, isDiskFull } from "../errors.js";
import { publicApiLicenceCheck, type Licence } from "../licence/licence.js";
import type { BackupRunner } from "../ops/backup-runner.js";
import type { OpenVolume } from "../volume/open-volume.js";
import { authRoutes } from "./routes/auth.js";
import { requireSameOrigin } from "./same-origin.js";
import { rateLimitPluginStore } from "./rate-limit-plugin-store.js";
import { backupRoutes } from "./routes/backup.js";
import { healthRoutes } from "./routes/health.js";
import { publicApiRoutes, type PublicApiOptions } from "./routes/public-api.js";
import { restoreRoutes } from "./routes/restore.js";
import { overviewRoutes } from "./routes/admin-overview.js";
import { accountRoutes } from "./routes/admin-accounts.js";
import { adminLibraryRoutes } from "./routes/admin-libraries.js";
import { dashboardRoutes } from "./dashboard.js";
import { oauthRoutes } from "./routes/oauth.js";
import type { JobRunner } from "../ops/job-runner.js";
import { isPublicApiRoute, matchedRoute } from "./public-paths.js";
import { LibraryRedirected } from "../search/visible-library.js";
import { renderHint } from "../hints.js";
import { SERVER_HINT_WORDS } from "./hint-words.js";
import { isClientClosed } from "./client-closed.js";
import type { UsageRecorder } from "../ops/usage-recorder.js";

export interface AppSettings {
  /** @default 12 hours */
  sessionTtlSeconds: number;
  /** @default 10 */
  loginAttemptsPerMinute: number;
  /** @default 16 GiB */
  uploadLimitBytes: number;
  /** Trust X-Forwarded-* from a reverse proxy (for the Secure cookie flag behind https). @default false */
  trustProxy: boolean;
}

export interface AppOptions {
  volume: OpenVolume;
  jobs: JobRunner;
  publicApi: Omit<PublicApiOptions, "volume" | "jobs" | "usage">;
  usage: UsageRecorder;
  logger: Logger;
  runner: BackupRunner;
  licence: () => Licence;
  requestRestart: (reason: string) => void;
  settings: AppSettings;
}

/** The HTTP shell: routes call the core and turn LdsError into a status and `{error, message}`. */
export function buildApp({ volume, jobs, publicApi, usage, logger, runner, licence, requestRestart, settings }: AppOptions): FastifyInstance {
  const app = Fastify({
    loggerInstance: logger as unknown as FastifyBaseLogger,
    bodyLimit: 1024 * 1024,
    trustProxy: settings.trustProxy,
  });

  app.setErrorHandler((raw, request, reply) => {
    if (isClientClosed(raw, request.raw)) {
      // Nothing failed here and no one is left to answer (the status is for the request's own log line only).
      request.log.info({ code: (raw as { code?: string }).code, err: (raw as Error).message }, "client closed the connection");
      return reply.status(499).send();
    }
    const err = isDiskFull(raw) ? fromSystemError(raw, "the data volume") : raw;
    if (err instanceof LdsError) {
      if (err.status >= 500) request.log.error({ code: err.code, err: err.message }, "request failed");
      // The hint, worded for an HTTP client (the dashboard shows it under the message).
      const hint = err.hint ? { hint: renderHint(err.hint, SERVER_HINT_WORDS) } : {};
      // A renamed library answers as the hosted service does: its clients read redirectUrl (no Location: not for browsers).
      const redirect = err instanceof LibraryRedirected ? { redirectUrl: err.redirectUrl } : {};
      return reply.status(err.status).send({ error: err.code, message: err.message, ...hint, ...redirect });
    }
    const e = err as { statusCode?: number; validation?: unknown; message: string };
    if (e.validation) {
      return reply.status(400).send({
        error: "validation_error",
        message:
          e.message
            .replace(/^(body|querystring|params)\/?/, "")
            .replace(/\//g, ".")
            .trim() || e.message,
      });
    }
    if (e.statusCode && e.statusCode >= 400 && e.statusCode < 500) {
      // Fastify's own client errors (bad JSON, body too large): keep their status, use our body shape.
      const code = e.statusCode === 413 ? "payload_too_large" : "validation_error";
      return reply.status(e.statusCode).send({ error: code, message: e.message });
    }
    request.log.error({ err }, "unexpected error");
    return reply.status(500).send({ error: "internal_error", message: "Internal error; the server log has details." });
  });

  // An empty body with Content-Type: application/json (curl -X POST -H … without -d) means "no body", not an error.
  app.removeContentTypeParser("application/json");
  app.addContentTypeParser("application/json", { parseAs: "string" }, (_request, body, done) => {
    if (body === "") return done(null, undefined);
    if (nestingDepth(body as string) > MAX_JSON_DEPTH) {
      return done(new LdsError("validation_error", `The request body is nested more than ${MAX_JSON_DEPTH} levels deep; no endpoint takes that.`), undefined);
    }
    try {
      done(null, JSON.parse(body as string));
    } catch {
      done(new LdsError("validation_error", "The request body is not valid JSON."), undefined);
    }
  });

  app.setNotFoundHandler((request, reply) => reply.status(404).send({ error: "route_not_found", message: `No endpoint ${request.method} ${request.url}.` }));

  // Both decided from the route the router matched, never from the raw URL (public-paths.ts says why): the public
  // API (and MCP) is closed by an expired or invalid licence, /api (admin, backups, health) never is.
  const checkLicence = publicApiLicenceCheck(licence, (source, problem) => logger.warn({ source, problem }, "The licence cannot be read: the public API answers 403 license_invalid until it is fixed."));
  app.addHook("onRequest", async (request) => {
    if (isPublicApiRoute(matchedRoute(request))) checkLicence();
  });
  app.addHook("onRequest", requireSameOrigin);
  logRoutes(app);

  app.register(cookie);
  app.register(rateLimit, {
    global: false,
    store: rateLimitPluginStore(volume.store.requestWindows),
    errorResponseBuilder: (_request, context) => new LdsError("rate_limit_exceeded", `Too many requests: ${context.max} per ${context.after}. Try again in ${Math.ceil(context.ttl / 1000)} s.`),
  });
  app.register(healthRoutes, { volume });
  app.register(authRoutes, { volume, sessionTtlSeconds: settings.sessionTtlSeconds, loginAttemptsPerMinute: settings.loginAttemptsPerMinute });
  app.register(backupRoutes, { volume, runner });
  app.register(restoreRoutes, { volume, uploadLimitBytes: settings.uploadLimitBytes, runner, requestRestart });
  app.register(overviewRoutes, { volume, runner, licence });
  app.register(accountRoutes, { volume });
  app.register(adminLibraryRoutes, { volume, jobs, gitPolicy: publicApi.gitPolicy });
  app.register(oauthRoutes, { volume });
  app.register(dashboardRoutes);
  app.register(publicApiRoutes, { volume, jobs, usage, ...publicApi });
  return app;
}

/**
 * Every route, listed once at start in the debug log ("routes"): what an operator can check an upgrade against, and
 * how the tests walk every admin and public route (test/server/encoded-paths.test.ts) without a hand-typed list.
 */
function logRoutes(app: FastifyInstance): void {
  const routes: Array<{ method: string; url: string }> = [];
  app.addHook("onRoute", (route) => {
    for (const method of [route.method].flat()) if (method !== "HEAD") routes.push({ method, url: route.url });
  });
  app.addHook("onReady", async () => app.log.debug({ routes }, "routes"));
}

/** Deeper JSON than any endpoint takes is refused before parsing: deep values overflow the stack of later steps. */
const MAX_JSON_DEPTH = 64;

/** The deepest nesting of arrays and objects in a JSON text, counted without parsing (strings skipped). */
export function nestingDepth(text: string): number {
  let depth = 0;
  let deepest = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 92)
        i++; // backslash: skip the escaped character
      else if (c === 34) inString = false;
    } else if (c === 34) inString = true;
    else if (c === 91 || c === 123) deepest = Math.max(deepest, ++depth);
    else if (c === 93 || c === 125) depth--;
  }
  return deepest;
}
