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
  return [...documentSnippets(root, files)];
}

/** As parseDocuments, one file at a time: an ingestion holds one file's snippets, not a whole repository's. */
export function* documentSnippets(root: string, files: Iterable<string>): Generator<Snippet> {
  for (const rel of files) {
    const full = path.join(root, rel);
    if (fs.statSync(full).size > MAX_DOCUMENT_BYTES) continue;
    const text = fs.readFileSync(full, "utf8");
    const ext = path.extname(rel).toLowerCase();
    if (ext === ".ipynb") yield* parseNotebook(text, rel);
    else if (ext === ".rst") yield* parseRst(text, rel);
    else yield* parseMarkdown(text, rel);
  }
}
