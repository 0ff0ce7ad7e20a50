import fs from "node:fs";
import path from "node:path";
import { parseMarkdown } from "./markdown.js";
import { parseNotebook } from "./notebook.js";
import { parseRst } from "./rst.js";
import type { Snippet } from "./snippet.js";

/** A single file larger than this is skipped: generated API dumps and data files drown real documentation. */
export const MAX_DOCUMENT_BYTES = 2 * 1024 * 1024;

/** Parse each collected file with the parser for its kind. */
export function parseDocuments(root: string, files: string[]): Snippet[] {
  const snippets: Snippet[] = [];
  for (const rel of files) {
    const full = path.join(root, rel);
    if (fs.statSync(full).size > MAX_DOCUMENT_BYTES) continue;
    const text = fs.readFileSync(full, "utf8");
    const ext = path.extname(rel).toLowerCase();
    if (ext === ".ipynb") snippets.push(...parseNotebook(text, rel));
    else if (ext === ".rst") snippets.push(...parseRst(text, rel));
    else snippets.push(...parseMarkdown(text, rel));
  }
  return snippets;
}
