import type { FastifyRequest } from "fastify";
import type { ClientKind } from "../ops/usage-recorder.js";
import { isMcpRoute, matchedRoute } from "./public-paths.js";

/**
 * Which kind of client sent a request, by the headers the hosted service's clients send (`X-Context7-Source:
 * mcp-server` from its MCP server, `cli` from ctx7) or by the endpoint (`/mcp`); anything else is "api". The MCP
 * client's name comes from `X-Context7-Client-IDE` or, on /mcp, the User-Agent's first product.
 */
export function clientOf(request: FastifyRequest): { client: ClientKind; mcpClient?: string } {
  const header = (name: string) => {
    const value = request.headers[name];
    return (Array.isArray(value) ? value[0] : value)?.trim() || undefined;
  };
  const source = header("x-context7-source")?.toLowerCase();
  const onMcp = isMcpRoute(matchedRoute(request));
  const client: ClientKind = onMcp || source === "mcp-server" || source === "mcp" ? "mcp" : source === "cli" ? "cli" : "api";
  if (client !== "mcp") return { client };
  const product = /^([^/\s]+)\//.exec(header("user-agent") ?? "")?.[1];
  return { client, mcpClient: header("x-context7-client-ide") ?? product };
}
