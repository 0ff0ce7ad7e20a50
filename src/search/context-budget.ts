/**
 * The token budget of a context answer, the same for the API, MCP and the CLI. A module of its own so that the
 * CLI's argument parser can read it without loading the search code.
 */
export const CONTEXT_TOKENS = { default: 5000, min: 100, max: 100_000 } as const;
