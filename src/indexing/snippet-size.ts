import { estimateTokens } from "./snippet.js";

/**
 * The most a snippet's text may hold: 2,000 tokens (index/snippet.ts's estimate, four characters a token), so that
 * any snippet with its title, description and path fits the default token budget of an answer (5,000: search/
 * context-budget.ts) with room for others. A longer section (a page of community links, a table of every error
 * code, a reference page's options) could otherwise never be returned, and ranks as one blur of words.
 */
export const MAX_SNIPPET_TOKENS = 2000;

/**
 * `text` cut into pieces of at most `maxTokens`, at the largest boundary that makes them fit: blank lines
 * (paragraphs; in code, the blank lines between its parts), else line ends, else spaces, else anywhere. Pieces
 * keep their text as it was: joined with the boundaries they were cut at, they are the text again. Code is cut
 * from within one fenced block, so every piece is a whole block of its own: never a fence opened in one piece and
 * closed in the next.
 */
export function piecesWithin(text: string, maxTokens = MAX_SNIPPET_TOKENS): string[] {
  if (estimateTokens(text) <= maxTokens) return [text];
  return cut(text, maxTokens * 4, BOUNDARIES);
}

/** Separators from the largest unit to the smallest. */
const BOUNDARIES = [/\n[ \t]*\n/, /\n/, / /];

function cut(text: string, maxChars: number, boundaries: RegExp[]): string[] {
  if (text.length <= maxChars) return [text];
  const [boundary, ...smaller] = boundaries;
  if (!boundary) {
    const pieces: string[] = [];
    for (let at = 0; at < text.length; at += maxChars) pieces.push(text.slice(at, at + maxChars));
    return pieces;
  }
  const parts = splitKeeping(text, boundary);
  const pieces: string[] = [];
  let current = "";
  for (const part of parts) {
    if (part.length > maxChars) {
      if (current.trim()) pieces.push(tidy(current));
      current = "";
      pieces.push(...cut(tidy(part), maxChars, smaller));
      continue;
    }
    if (current && current.length + part.length > maxChars) {
      if (current.trim()) pieces.push(tidy(current));
      current = "";
    }
    current += part;
  }
  if (current.trim()) pieces.push(tidy(current));
  return pieces;
}

/** Without the blank lines at its start and the white space at its end: a code line's indentation is kept. */
function tidy(text: string): string {
  return text.replace(/^(?:[ \t]*\n)+/, "").trimEnd();
}

/** The text cut after every match of `boundary`, each part keeping the separator that ends it. */
function splitKeeping(text: string, boundary: RegExp): string[] {
  const parts: string[] = [];
  const global = new RegExp(boundary.source, "g");
  let start = 0;
  for (const match of text.matchAll(global)) {
    parts.push(text.slice(start, match.index + match[0].length));
    start = match.index + match[0].length;
  }
  if (start < text.length) parts.push(text.slice(start));
  return parts;
}
