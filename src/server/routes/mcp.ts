import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import type { FastifyPluginAsync } from "fastify";
import { LdsError } from "../../errors.js";
import type { OpenVolume } from "../../volume/open-volume.js";
import { createMcpServer } from "../../search/mcp-server.js";
import type { UsageRecorder } from "../../ops/usage-recorder.js";
import { clientOf } from "../client-kind.js";

/**
 * POST /mcp: the MCP streamable-HTTP endpoint, stateless (a server and transport per request, no session to
 * keep or expire), behind the same bearer key and rate limit as the rest of the public API.
 */
export const mcpRoutes: FastifyPluginAsync<{ volume: OpenVolume; usage: UsageRecorder }> = async (app, { volume, usage }) => {
  app.post("/mcp", async (request, reply) => {
    const { mcpClient } = clientOf(request);
    const server = createMcpServer(volume, request.access!, (libraryId, query) => usage.record({ libraryId, query, client: "mcp", mcpClient }));
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
    // The transport writes the raw response itself; keep the rate-limit headers the auth hook set.
    for (const [name, value] of Object.entries(reply.getHeaders())) if (value !== undefined) reply.raw.setHeader(name, value as string);
    reply.hijack();
    reply.raw.on("close", () => {
      void transport.close();
      void server.close();
    });
    await server.connect(transport);
    await transport.handleRequest(request.raw, reply.raw, request.body);
  });

  // Stateless: there is no stream to resume (GET) and no session to end (DELETE).
  const notAllowed = async () => {
    throw new LdsError("method_not_allowed", "This MCP endpoint is stateless: send JSON-RPC requests with POST /mcp.");
  };
  app.get("/mcp", notAllowed);
  app.delete("/mcp", notAllowed);
};
