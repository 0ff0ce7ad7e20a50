import Fastify, { type FastifyBaseLogger, type FastifyInstance } from "fastify";
import type { Logger } from "pino";
import { LdsError } from "../errors.js";
import type { OpenVolume } from "../ops/open-volume.js";
import { healthRoutes } from "./routes/health.js";

export interface AppOptions {
  volume: OpenVolume;
  logger: Logger;
}

/** The HTTP shell: routes call the core and turn LdsError into a status and `{error, message}`. */
export function buildApp({ volume, logger }: AppOptions): FastifyInstance {
  const app = Fastify({
    loggerInstance: logger as unknown as FastifyBaseLogger,
    bodyLimit: 1024 * 1024,
  });

  app.setErrorHandler((err, request, reply) => {
    if (err instanceof LdsError) {
      if (err.status >= 500) request.log.error({ code: err.code, err: err.message }, "request failed");
      return reply.status(err.status).send({ error: err.code, message: err.message });
    }
    const status = (err as { statusCode?: number }).statusCode;
    if (status && status >= 400 && status < 500) {
      // Fastify's own client errors (bad JSON, body too large): keep their status, use our body shape.
      return reply.status(status).send({ error: "validation_error", message: (err as Error).message });
    }
    request.log.error({ err }, "unexpected error");
    return reply.status(500).send({ error: "internal_error", message: "Internal error; the server log has details." });
  });

  app.setNotFoundHandler((request, reply) =>
    reply.status(404).send({ error: "route_not_found", message: `No endpoint ${request.method} ${request.url}.` }),
  );

  app.register(healthRoutes, { volume });
  return app;
}
