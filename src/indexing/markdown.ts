import { readFrontMatter } from "./front-matter.js";
import { withoutMarkupNoise, headingOf } from "./markup-noise.js";
import type { Snippet } from "./snippet.js";
import { piecesWithin } from "./snippet-size.js";

/**
 * Prose of fewer words carries too little to be a snippet of its own. Counted in words, not characters: a short
 * section ("Rollback: run deploy --undo.") must still be found.
 */
const MIN_INFO_WORDS = 3;

/**
 * Split Markdown into snippets: every fenced code block becomes a code snippet titled by its section heading and
 * described by the prose just before it; each section's prose becomes an info snippet. Every snippet knows its
 * page's title (the front matter's `title`, else the first level-1 heading, else the file's name), which search
 * ranks with it. MDX and HTML noise is left out (markup-noise.ts), and so is the front matter. A section or code
 * block larger than a snippet may be is cut at its paragraphs (snippet-size.ts), each piece under the same heading.
 */
export function parseMarkdown(text: string, sourcePath: string): Snippet[] {
  const snippets: Snippet[] = [];
  const front = readFrontMatter(text.replace(/\r\n/g, "\n"));
  // The extension tells MDX from Markdown: reStructuredText, notebooks and Confluence pages arrive here as Markdown.
  const lines = withoutMarkupNoise(front.body.split("\n"), { mdx: /\.mdx$/i.test(sourcePath) });
  const pageTitle = front.title ?? firstH1(lines) ?? titleFromPath(sourcePath);
  let heading = pageTitle;
  let anchor: string | null = null;
  let prose: string[] = [];
  let lastParagraph = "";

  const flushProse = () => {
    const body = prose.join("\n").trim();
    if (body.split(/\s+/).filter((w) => /[\p{L}\p{N}]/u.test(w)).length >= MIN_INFO_WORDS) {
      for (const piece of piecesWithin(body)) snippets.push({ kind: "info", title: heading, description: firstSentence(piece), language: null, content: piece, sourcePath, anchor, pageTitle });
    }
    prose = [];
  };

  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!;
    const fence = /^(\s*)(`{3,}|~{3,})\s*([\w+#.-]*)/.exec(line);
    if (fence) {
      const close = fence[2]!;
      const code: string[] = [];
      for (i++; i < lines.length && !lines[i]!.trimStart().startsWith(close); i++) code.push(lines[i]!);
      const content = code.join("\n").replace(/\s+$/, "");
      if (content.trim()) {
        for (const piece of piecesWithin(content)) snippets.push({ kind: "code", title: heading, description: lastParagraph, language: fence[3] || null, content: piece, sourcePath, anchor, pageTitle });
        // That paragraph is the code's description now: the section's info snippet must not repeat it.
        if (lastParagraph) dropTrailingParagraph(prose);
      }
      lastParagraph = "";
      continue;
    }
    const h = headingOf(line);
    if (h) {
      flushProse();
      heading = h.title;
      anchor = h.id ?? slug(heading);
      lastParagraph = "";
      continue;
    }
    prose.push(line);
    if (line.trim()) lastParagraph = paragraphEndingAt(lines, i);
  }
  flushProse();
  return snippets;
}

/** The first level-1 heading outside code, as a title. */
function firstH1(lines: string[]): string | undefined {
  let fence: string | null = null;
  for (const line of lines) {
    const mark = /^\s*(`{3,}|~{3,})/.exec(line)?.[1];
    if (mark && (!fence || mark.startsWith(fence))) fence = fence ? null : mark;
    if (fence) continue;
    const h = headingOf(line);
    if (h?.level === 1 && h.title) return h.title;
  }
  return undefined;
}

function dropTrailingParagraph(prose: string[]): void {
  while (prose.length && !prose[prose.length - 1]!.trim()) prose.pop();
  while (prose.length && prose[prose.length - 1]!.trim()) prose.pop();
}

function paragraphEndingAt(lines: string[], end: number): string {
  let start = end;
  while (start > 0 && lines[start - 1]!.trim() && !/^(#{1,6}\s|`{3,}|~{3,})/.test(lines[start - 1]!.trimStart())) start--;
  return lines
    .slice(start, end + 1)
    .join(" ")
    .replace(/\s+/g, " ")
    .trim()
    .slice(0, 500);
}

function firstSentence(text: string): string {
  const flat = text.replace(/\s+/g, " ");
  return (/^(.{20,300}?[.!?])(\s|$)/.exec(flat)?.[1] ?? flat.slice(0, 200)).trim();
}

export function slug(text: string): string {
  return text
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\s-]/gu, "")
    .trim()
    .replace(/\s+/g, "-");
}

function titleFromPath(sourcePath: string): string {
  return sourcePath
    .split("/")
    .pop()!
    .replace(/\.[^.]+$/, "")
    .replace(/[-_]/g, " ");
}
