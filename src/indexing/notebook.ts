import { parseMarkdown } from "./markdown.js";
import type { Snippet } from "./snippet.js";

/** A Jupyter notebook as Markdown: markdown cells as they are, code cells as fenced blocks in the kernel's language. */
export function parseNotebook(text: string, sourcePath: string): Snippet[] {
  let notebook: { cells?: Array<{ cell_type?: string; source?: string | string[] }>; metadata?: { kernelspec?: { language?: string } } };
  try {
    notebook = JSON.parse(text);
  } catch {
    return [];
  }
  const language = notebook.metadata?.kernelspec?.language ?? "python";
  const markdown = (notebook.cells ?? [])
    .map((cell) => {
      const source = Array.isArray(cell.source) ? cell.source.join("") : (cell.source ?? "");
      if (cell.cell_type === "markdown") return source;
      if (cell.cell_type === "code" && source.trim()) return "```" + language + "\n" + source + "\n```";
      return "";
    })
    .join("\n\n");
  return parseMarkdown(markdown, sourcePath);
}
