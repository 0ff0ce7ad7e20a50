import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { z } from "zod";
import { APP_VERSION } from "../version.js";
import { isLdsError } from "../errors.js";
import type { OpenVolume } from "../volume/open-volume.js";
import { buildContext } from "./context.js";
import { CONTEXT_TOKENS } from "./context-budget.js";
import { contextAsText } from "./context-text.js";
import type { LibraryAccess } from "./library-access.js";
import { searchLibraries } from "./library-search.js";
import type { LibrarySummary } from "./library-summary.js";

/**
 * An MCP server with the two tools documentation agents expect, named as the hosted service names them so that
 * agent prompts written for it work unchanged: resolve-library-id (a name to library ids) and query-docs (the
 * snippets of one library that answer a question). One per request: the endpoint is stateless.
 */
export function createMcpServer(volume: OpenVolume, access: LibraryAccess): McpServer {
  const server = new McpServer({ name: "lds", version: APP_VERSION });

  server.registerTool(
    "resolve-library-id",
    {
      title: "Resolve a library name to a library id",
      description:
        "Finds libraries by name and returns their library ids (/owner/repo), descriptions, snippet counts and pinnable versions. Call it before query-docs unless you already know the id.",
      inputSchema: {
        libraryName: z.string().min(1).max(200).describe("Library name to search for, e.g. \"react\" or \"next.js\""),
        query: z.string().max(2000).optional().describe("The task or question, used to rank libraries of equal name match"),
      },
      annotations: { readOnlyHint: true },
    },
    async ({ libraryName, query }) =>
      answer(async () => {
        const results = await searchLibraries(volume.store, access, { libraryName, query });
        const codeCounts = await Promise.all(results.map((library) => volume.store.snippets.count(library.id, "", "code")));
        return `Libraries matching "${libraryName}":\n\n${results.map((library, i) => describeLibrary(library, codeCounts[i]!)).join("\n----------\n")}`;
      }),
  );

  server.registerTool(
    "query-docs",
    {
      title: "Query a library's documentation",
      description:
        "Returns the documentation snippets and code examples of one library that best answer a question, within a token budget. Pin a version as /owner/repo/v1.2 or /owner/repo@v1.2.",
      inputSchema: {
        libraryId: z.string().min(1).max(512).describe("Library id from resolve-library-id, e.g. /vercel/next.js"),
        query: z.string().min(1).max(2000).describe("The question or task"),
        tokens: z.number().int().min(CONTEXT_TOKENS.min).max(CONTEXT_TOKENS.max).optional().describe(`Token budget of the answer (default ${CONTEXT_TOKENS.default})`),
      },
      annotations: { readOnlyHint: true },
    },
    async ({ libraryId, query, tokens }) =>
      answer(async () => {
        const budget = tokens ?? CONTEXT_TOKENS.default;
        const context = await buildContext(volume, access, { libraryId, query, tokens: budget });
        return contextAsText(context) || `No snippet of ${libraryId} fits a budget of ${budget} tokens; ask with a larger budget.`;
      }),
  );
  return server;
}

function describeLibrary(library: LibrarySummary, codeSnippets: number): string {
  return [
    `- Title: ${library.title}`,
    `- Library ID: ${library.id}`,
    `- Description: ${library.description || "(none)"}`,
    `- Code Snippets: ${codeSnippets}`,
    `- State: ${library.state}`,
    `- Versions: ${library.versions.join(", ") || "(current only)"}`,
  ].join("\n");
}

/** Errors a caller can act on (not found, access denied, …) are tool results with isError, as MCP intends. */
async function answer(produce: () => string | Promise<string>) {
  try {
    return { content: [{ type: "text" as const, text: await produce() }] };
  } catch (err) {
    if (!isLdsError(err)) throw err;
    return { isError: true, content: [{ type: "text" as const, text: `${err.code}: ${err.message}` }] };
  }
}
