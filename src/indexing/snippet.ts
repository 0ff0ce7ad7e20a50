/** A piece of documentation as stored: code with its explanation, or a prose section. */
export interface Snippet {
  kind: "code" | "info";
  title: string;
  description: string;
  language: string | null;
  content: string;
  sourcePath: string;
  /** Heading anchor within the source file, e.g. "installation". */
  anchor: string | null;
}

/** A rough token count (about four characters per token), enough for budgets and statistics. */
export function estimateTokens(text: string): number {
  return Math.ceil(text.length / 4);
}
