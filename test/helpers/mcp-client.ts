import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";

/** One `query-docs` call through the MCP SDK's own client (a session of one call), as an agent makes it. */
export async function mcpQueryDocs(serverUrl: string, key: string, libraryId: string, query: string): Promise<{ isError: boolean; text: string }> {
  const client = new Client({ name: "lds-test", version: "1.0.0" });
  await client.connect(new StreamableHTTPClientTransport(new URL(serverUrl + "/mcp"), { requestInit: { headers: { authorization: `Bearer ${key}` } } }));
  try {
    const result = await client.callTool({ name: "query-docs", arguments: { libraryId, query } });
    return { isError: Boolean(result.isError), text: (result.content as Array<{ text: string }>).map((c) => c.text).join("\n") };
  } finally {
    await client.close();
  }
}
