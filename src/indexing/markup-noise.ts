/**
 * What Markdown and MDX pages carry that is markup, not documentation: MDX `import`/`export` lines, lines made only
 * of JSX/HTML tags (`<Tabs>`, `</TabItem>`, `<Admonition type="tip">`), and empty HTML anchors (`<a id="x"></a>`)
 * that pages put before headings. Indexed, they are words that match queries about imports or tabs everywhere.
 * Code fences are left as they are: an import inside an example is the example.
 */
export function withoutMarkupNoise(lines: string[]): string[] {
  const out: string[] = [];
  let fence: string | null = null;
  for (const line of lines) {
    const mark = /^\s*(`{3,}|~{3,})/.exec(line)?.[1];
    if (mark && (!fence || (mark[0] === fence[0] && mark.length >= fence.length))) {
      fence = fence ? null : mark;
      out.push(line);
      continue;
    }
    if (fence) {
      out.push(line);
      continue;
    }
    if (MDX_MODULE_LINE.test(line) || TAGS_ONLY.test(line)) continue;
    out.push(line.replace(EMPTY_ANCHOR, ""));
  }
  return out;
}

/** `import X from "y";`, `import "y";`, `export const meta = …` / `export default …` at a line's start (MDX). */
const MDX_MODULE_LINE = /^(import\s+(?:[\w*{}\s,]+\s+from\s+)?["'][^"']+["'];?\s*$|export\s+(?:default\b|const\s|let\s|function\s|\{))/;
/** A line of nothing but tags, opening, closing or self-closing, e.g. `<Tabs groupId="os">` or `</TabItem>`. */
const TAGS_ONLY = /^\s*(?:<\/?[A-Za-z][\w.:-]*(?:\s+[^<>]*)?\/?>\s*)+$/;
/** `<a id="…"></a>`, `<a name="…"/>`: a link target for an old anchor, no text. */
const EMPTY_ANCHOR = /<a\s+(?:id|name)=["'][^"']*["']\s*(?:\/>|>\s*<\/a>)/gi;

/**
 * An ATX heading's level, its title as a reader sees it (no `{#id}` anchor, link markup, HTML tags or emphasis
 * marks) and its explicit anchor, or null for a line that is not a heading.
 */
export function headingOf(line: string): { level: number; title: string; id: string | null } | null {
  const h = /^(#{1,6})\s+(.+?)\s*#*\s*$/.exec(line);
  if (!h) return null;
  let title = h[2]!;
  const id = /\s*\{#([\w.:-]+)\}\s*$/.exec(title);
  if (id) title = title.slice(0, id.index);
  title = title
    .replace(/!?\[([^\]]*)\]\([^)]*\)/g, "$1")
    .replace(/<[^>]+>/g, "")
    .replace(/[`*_]/g, "")
    .trim();
  return { level: h[1]!.length, title, id: id?.[1] ?? null };
}
