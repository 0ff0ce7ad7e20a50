import { LdsError } from "../errors.js";
import type { SnippetText } from "../store/records.js";

/** A piece of documentation as parsed: its text (code with its explanation, or a prose section) and its origin. */
export interface Snippet extends SnippetText {
  sourcePath: string;
  /** Heading anchor within the source file, e.g. "installation". */
  anchor: string | null;
  /** The page's title where the path does not tell it (wiki pages are stored as pages/<id>). */
  pageTitle?: string;
}

/** A rough token count (about four characters per token), enough for budgets and statistics. */
export function estimateTokens(text: string): number {
  return Math.ceil(text.length / 4);
}

/** The text a snippet's vector is made from, the same at ingestion and at a rebuild of the vector index. */
export function embeddingText(snippet: { title: string; description: string; content: string }): string {
  return `${snippet.title}\n${snippet.description}\n${snippet.content}`;
}

/** The spec's no_snippets_found, for a source in which nothing could be indexed. */
export function noSnippetsFound(libraryId: string): LdsError {
  return new LdsError("no_snippets_found", `No documentation snippets could be fetched for ${libraryId}: no Markdown, reStructuredText, text or notebook content was found.`, {
    hint: "Check that the repository holds documentation, or its lds.json/context7.json folders.",
  });
}
