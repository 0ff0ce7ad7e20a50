import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import type { FastifyPluginAsync, FastifyReply } from "fastify";
import { LdsError } from "../../errors.js";
import type { OpenVolume } from "../../volume/open-volume.js";
import { createMcpServer } from "../../search/mcp-server.js";
import type { UsageRecorder } from "../../ops/usage-recorder.js";
import { clientOf } from "../client-kind.js";
import { chargeAsMany } from "../rate-limiter.js";

/**
 * JSON-RPC messages one POST may carry. The MCP revision 2025-06-18 dropped batches, but clients of 2025-03-26 may
 * still send them (the SDK accepts up to 100); each message is work, so each counts against the rate limit, and a
 * batch stays small enough that one request cannot start more than this many tool calls at once.
 */
export const MAX_BATCH_MESSAGES = 20;

/**
 * POST /mcp: the MCP streamable-HTTP endpoint, stateless (a server and transport per request, no session to
 * keep or expire), behind the same bearer key and rate limit as the rest of the public API; each message of a
 * JSON-RPC batch counts as one request.
 */
export const mcpRoutes: FastifyPluginAsync<{ volume: OpenVolume; usage: UsageRecorder }> = async (app, { volume, usage }) => {
  app.post("/mcp", async (request, reply) => {
    await chargeEachMessage(request.body, reply);
    const { mcpClient } = clientOf(request);
    const server = createMcpServer(volume, request.access!, (libraryId, query) => usage.record({ libraryId, query, client: "mcp", mcpClient }));
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
    // The transport writes the raw response itself; keep the rate-limit headers (with the batch's charge).
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

/**
 * A batch costs what its messages cost: one request each, charged before any of them runs (all or nothing), so a
 * JSON-RPC array is no way around the rate limit. An empty batch is invalid JSON-RPC; an oversized one is refused.
 */
async function chargeEachMessage(body: unknown, reply: FastifyReply): Promise<void> {
  if (!Array.isArray(body)) return; // one message: the authentication hook has counted it
  if (body.length === 0 || body.length > MAX_BATCH_MESSAGES) {
    throw new LdsError("validation_error", `A JSON-RPC batch holds 1 to ${MAX_BATCH_MESSAGES} messages; this one holds ${body.length}. Send the messages one at a time or in smaller batches.`);
  }
  await chargeAsMany(reply, body.length, `this batch of ${body.length} JSON-RPC messages`);
}
