/**
 * What Markdown and MDX pages carry that is markup, not documentation: MDX `import`/`export` lines (in `.mdx` pages
 * only: in a `.md` page or reStructuredText such a line is prose), lines made only of JSX/HTML tags (`<Tabs>`,
 * `</TabItem>`, `<Admonition type="tip">`), and empty HTML anchors (`<a id="x"></a>`) that pages put before
 * headings. Indexed, they are words that match queries about imports or tabs everywhere. Code is left as it is, fenced
 * or indented (4 spaces or a tab after a blank line, as Markdown reads it): an import or a `<dependency>` tag inside an
 * example is the example. MDX has no indented code, so in `.mdx` pages an indented tag line is JSX and goes.
 */
export function withoutMarkupNoise(lines: string[], options: { mdx: boolean }): string[] {
  const out: string[] = [];
  let fence: string | null = null;
  let indentedCode = false;
  for (const [i, line] of lines.entries()) {
    const mark = /^\s*(`{3,}|~{3,})/.exec(line)?.[1];
    if (mark && (!fence || (mark[0] === fence[0] && mark.length >= fence.length))) {
      fence = fence ? null : mark;
      out.push(line);
      continue;
    }
    // An indented block starts after a blank line or a heading (an indented line right after prose continues the
    // paragraph) and runs on through blank lines while its lines stay indented.
    if (line.trim()) indentedCode = !options.mdx && INDENTED.test(line) && (indentedCode || startsBlock(lines[i - 1]));
    if (fence || indentedCode) {
      out.push(line);
      continue;
    }
    if ((options.mdx && MDX_MODULE_LINE.test(line)) || TAGS_ONLY.test(line)) continue;
    out.push(line.replace(EMPTY_ANCHOR, ""));
  }
  return out;
}

function startsBlock(previous: string | undefined): boolean {
  return !previous?.trim() || /^#{1,6}\s/.test(previous);
}

/** A line of indented code: 4 spaces or a tab before its text. */
const INDENTED = /^(?: {4}| {0,3}\t)/;
/** `import X from "y";`, `import "y";`, `export const meta = …` / `export default …` at a line's start (MDX). */
const MDX_MODULE_LINE = /^(import\s+(?:[\w*{}\s,]+\s+from\s+)?["'][^"']+["'];?\s*$|export\s+(?:default\b|const\s|let\s|function\s|\{))/;
/** A line of nothing but tags, opening, closing or self-closing, e.g. `<Tabs groupId="os">` or `</TabItem>`. */
const TAGS_ONLY = /^\s*(?:<\/?[A-Za-z][\w.:-]*(?:\s+[^<>]*)?\/?>\s*)+$/;
/** `<a id="…"></a>`, `<a name="…"/>`: a link target for an old anchor, no text. */
const EMPTY_ANCHOR = /<a\s+(?:id|name)=["'][^"']*["']\s*(?:\/>|>\s*<\/a>)/gi;

/**
 * An ATX heading's level, its title as a reader sees it (no `{#id}` anchor, link markup, HTML tags or emphasis
 * marks outside code spans) and its explicit anchor, or null for a line that is not a heading.
 */
export function headingOf(line: string): { level: number; title: string; id: string | null } | null {
  const h = /^(#{1,6})\s+(.+?)\s*#*\s*$/.exec(line);
  if (!h) return null;
  let title = h[2]!;
  const id = /\s*\{#([\w.:-]+)\}\s*$/.exec(title);
  if (id) title = title.slice(0, id.index);
  // Inside a code span (`Promise<void>`, `max_threads`) every character is the title's: tags and emphasis marks are
  // read only outside. Links go first, as a link's text may be a code span (`[`Pool<T>`](#pool)`).
  title = title
    .replace(/!?\[([^\]]*)\]\([^)]*\)/g, "$1")
    .split(/(`+[^`]*`+)/)
    .map((part, i) => (i % 2 ? part.replace(/`/g, "") : part.replace(/<[^>]+>/g, "").replace(/[`*_]/g, "")))
    .join("")
    .trim();
  return { level: h[1]!.length, title, id: id?.[1] ?? null };
}
