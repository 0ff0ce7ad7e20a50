import { parseMarkdown } from "./markdown.js";
import type { Snippet } from "./snippet.js";

/**
 * reStructuredText, read as Markdown after two rewrites: underlined section titles become headings, and
 * `.. code-block:: lang` / `::` literal blocks become fenced code. Enough for the documentation people write.
 */
export function parseRst(text: string, sourcePath: string): Snippet[] {
  const lines = text.replace(/\r\n/g, "\n").split("\n");
  const out: string[] = [];
  const levels: string[] = [];
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!;
    const under = lines[i + 1] ?? "";
    if (line.trim() && /^([=\-~^"'`#*+])\1{2,}\s*$/.test(under) && under.trim().length >= line.trim().length) {
      const mark = under.trim()[0]!;
      if (!levels.includes(mark)) levels.push(mark);
      out.push(`${"#".repeat(Math.min(levels.indexOf(mark) + 1, 6))} ${line.trim()}`);
      i++;
      continue;
    }
    const directive = /^\.\.\s+(code-block|code|sourcecode)::\s*(\S*)/.exec(line);
    const literal = !directive && /::\s*$/.test(line) && !/^\.\./.test(line);
    if (directive || literal) {
      if (literal) out.push(line.replace(/::\s*$/, ":"));
      const block: string[] = [];
      let j = i + 1;
      while (j < lines.length && (lines[j]!.trim() === "" || /^\s/.test(lines[j]!))) block.push(lines[j++]!);
      const body = block.filter((l) => !/^\s+:\w+:/.test(l));
      const indent = Math.min(...body.filter((l) => l.trim()).map((l) => l.length - l.trimStart().length));
      out.push(
        "```" + (directive?.[2] ?? ""),
        ...body
          .map((l) => l.slice(Number.isFinite(indent) ? indent : 0))
          .join("\n")
          .trim()
          .split("\n"),
        "```",
      );
      i = j - 1;
      continue;
    }
    out.push(line);
  }
  return parseMarkdown(out.join("\n"), sourcePath);
}
