import { Parser } from "htmlparser2";
import { parseMarkdown } from "./markdown.js";
import type { Snippet } from "./snippet.js";

/**
 * Confluence "storage format" (XHTML with ac: macros) → Markdown → snippets. Headings stay headings, the code
 * macro and <pre> become fenced blocks in their language, paragraphs and list items become prose. Everything else
 * keeps only its text. The page body is hostile input: it is parsed, never evaluated or rendered.
 */
export function parseConfluenceStorage(xhtml: string, sourcePath: string, pageTitle: string): Snippet[] {
  const out: string[] = [`# ${pageTitle.replace(/\s+/g, " ").trim()}`, ""];
  let text = "";
  let macro: { name: string; language: string; body: string } | null = null;
  let parameter: string | null = null;
  const flush = (suffix = "\n\n") => {
    const value = text.replace(/[ \t]+/g, " ").trim();
    if (value) out.push(value + suffix);
    text = "";
  };

  const parser = new Parser(
    {
      onopentag(name, attributes) {
        if (name === "ac:structured-macro") macro = { name: attributes["ac:name"] ?? "", language: "", body: "" };
        else if (name === "ac:parameter") parameter = attributes["ac:name"] ?? "";
        else if (/^h[1-6]$/.test(name) || name === "p" || name === "li" || name === "pre" || name === "tr") flush();
      },
      ontext(value) {
        if (macro && parameter === "language") macro.language += value.trim();
        else if (macro && parameter === null && macro.name === "code") macro.body += value;
        else if (!parameter) text += value;
      },
      onclosetag(name) {
        if (name === "ac:parameter") parameter = null;
        else if (name === "ac:structured-macro" && macro) {
          if (macro.name === "code" && macro.body.trim()) out.push("```" + macro.language, macro.body.replace(/^\n+|\s+$/g, ""), "```", "");
          macro = null;
        } else if (/^h[1-6]$/.test(name)) {
          const heading = text.replace(/\s+/g, " ").trim();
          text = "";
          if (heading) out.push(`${"#".repeat(Math.min(Number(name[1]) + 1, 6))} ${heading}`, "");
        } else if (name === "pre") {
          if (text.trim()) out.push("```", text.replace(/^\n+|\s+$/g, ""), "```", "");
          text = "";
        } else if (name === "p" || name === "li" || name === "tr") flush();
      },
    },
    { xmlMode: true, recognizeCDATA: true, decodeEntities: true },
  );
  parser.write(xhtml);
  parser.end();
  flush();
  const title = pageTitle.replace(/\s+/g, " ").trim();
  return parseMarkdown(out.join("\n"), sourcePath).map((snippet) => ({ ...snippet, pageTitle: title }));
}
