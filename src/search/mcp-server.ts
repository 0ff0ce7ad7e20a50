import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { CallToolRequestSchema, ErrorCode, ListPromptsRequestSchema, ListResourcesRequestSchema, ListResourceTemplatesRequestSchema, ListToolsRequestSchema, McpError } from "@modelcontextprotocol/sdk/types.js";
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

const ResolveArgs = z.object({
  libraryName: z.string().min(1).max(500).describe('Library name to search for, e.g. "react" or "next.js"'),
  query: z.string().max(2000).optional().describe("The task or question, used to rank libraries of equal name match"),
});

const QueryDocsArgs = z.object({
  libraryId: z.string().min(1).max(512).describe("Library id from resolve-library-id, e.g. /vercel/next.js"),
  query: z.string().min(1).max(2000).describe("The question or task"),
  tokens: z.number().int().min(CONTEXT_TOKENS.min).max(CONTEXT_TOKENS.max).optional().describe(`Token budget of the answer (default ${CONTEXT_TOKENS.default})`),
});

/**
 * The argument names agents send besides the documented ones (the official MCP server of the hosted service accepts
 * the same): a call with `userQuery` or `context7CompatibleLibraryID` works instead of failing validation.
 */
const ALIASES: Record<string, Record<string, string[]>> = {
  "resolve-library-id": { query: ["userQuery", "question"] },
  "query-docs": { query: ["userQuery", "question"], libraryId: ["context7CompatibleLibraryID", "libraryID", "libraryName"] },
};

const TOOLS = [
  {
    name: "resolve-library-id",
    title: "Resolve a library name to a library id",
    description: "Finds libraries by name and returns their library ids (/owner/repo), descriptions, snippet counts and pinnable versions. Call it before query-docs unless you already know the id.",
    inputSchema: z.toJSONSchema(ResolveArgs),
    annotations: { readOnlyHint: true },
  },
  {
    name: "query-docs",
    title: "Query a library's documentation",
    description: "Returns the documentation snippets and code examples of one library that best answer a question, within a token budget. Pin a version as /owner/repo/v1.2 or /owner/repo@v1.2.",
    inputSchema: z.toJSONSchema(QueryDocsArgs),
    annotations: { readOnlyHint: true },
  },
];

/**
 * An MCP server with the two tools documentation agents expect, named as the hosted service names them so that
 * agent prompts written for it work unchanged: resolve-library-id (a name to library ids) and query-docs (the
 * snippets of one library that answer a question). One per request: the endpoint is stateless, so it cannot send
 * notifications and says so (`listChanged: false`); prompts and resources are listed, empty, for clients that ask.
 */
export function createMcpServer(volume: OpenVolume, access: LibraryAccess, onAnswered: (libraryId: string, query: string) => void = () => {}): Server {
  const unchanging = { listChanged: false };
  const server = new Server({ name: "lds", version: APP_VERSION }, { capabilities: { tools: unchanging, prompts: unchanging, resources: unchanging } });
  server.setRequestHandler(ListToolsRequestSchema, async () => ({ tools: TOOLS }));
  server.setRequestHandler(ListPromptsRequestSchema, async () => ({ prompts: [] }));
  server.setRequestHandler(ListResourcesRequestSchema, async () => ({ resources: [] }));
  server.setRequestHandler(ListResourceTemplatesRequestSchema, async () => ({ resourceTemplates: [] }));
  server.setRequestHandler(CallToolRequestSchema, async (request) => {
    const { name } = request.params;
    const args = withAliases(request.params.arguments ?? {}, ALIASES[name] ?? {});
    if (name === "resolve-library-id") return answer(ResolveArgs, args, (a) => resolveLibraryId(volume, access, a));
    if (name === "query-docs") return answer(QueryDocsArgs, args, (a) => queryDocs(volume, access, a, onAnswered));
    throw new McpError(ErrorCode.InvalidParams, `No tool ${name}: the tools are resolve-library-id and query-docs.`);
  });
  return server;
}

async function resolveLibraryId(volume: OpenVolume, access: LibraryAccess, { libraryName, query }: z.infer<typeof ResolveArgs>): Promise<string> {
  const results = await searchLibraries(volume.store, volume.index, access, { libraryName, query });
  const codeCounts = await Promise.all(results.map((library) => volume.store.snippets.count(library.id, "", "code")));
  return `Libraries matching "${libraryName}":\n\n${results.map((library, i) => describeLibrary(library, codeCounts[i]!)).join("\n----------\n")}`;
}

async function queryDocs(volume: OpenVolume, access: LibraryAccess, { libraryId, query, tokens }: z.infer<typeof QueryDocsArgs>, onAnswered: (libraryId: string, query: string) => void): Promise<string> {
  const budget = tokens ?? CONTEXT_TOKENS.default;
  const context = await buildContext(volume, access, { libraryId, query, tokens: budget });
  onAnswered(context.libraryId, query);
  return contextAsText(context) || `No snippet of ${libraryId} fits a budget of ${budget} tokens; ask with a larger budget.`;
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

/** Each alias present is renamed to its canonical argument, unless the canonical one is given too. */
function withAliases(args: Record<string, unknown>, aliases: Record<string, string[]>): Record<string, unknown> {
  const renamed = { ...args };
  for (const [canonical, alternatives] of Object.entries(aliases)) {
    const alias = alternatives.find((a) => a in renamed);
    if (canonical in renamed || alias === undefined) continue;
    renamed[canonical] = renamed[alias];
    delete renamed[alias];
  }
  return renamed;
}

/**
 * Arguments that fail validation, and errors a caller can act on (not found, access denied, …), are tool results
 * with isError, as MCP intends: the agent reads them and corrects its call.
 */
async function answer<T extends z.ZodType>(schema: T, args: unknown, produce: (args: z.infer<T>) => Promise<string>) {
  const parsed = schema.safeParse(args);
  if (!parsed.success) {
    const problems = parsed.error.issues.map((issue) => `${issue.path.join(".") || "arguments"}: ${issue.message}`).join("; ");
    return { isError: true, content: [{ type: "text" as const, text: `validation_error: ${problems}` }] };
  }
  try {
    return { content: [{ type: "text" as const, text: await produce(parsed.data) }] };
  } catch (err) {
    if (!isLdsError(err)) throw err;
    return { isError: true, content: [{ type: "text" as const, text: `${err.code}: ${err.message}` }] };
  }
}
