import fs from "node:fs";
import path from "node:path";

/** Longest description kept: search results show it in one or two lines. */
const MAX_CHARS = 300;
/** Only the head of a README is read: the description is its first paragraph. */
const README_HEAD_BYTES = 64 * 1024;

/**
 * What a repository says it is, for search results: the `description` of its lds.json or context7.json, else the
 * first paragraph of prose in its README (badges, images, headings, HTML and code left out), at most 300
 * characters. Empty when it says nothing.
 */
export function repositoryDescription(root: string): string {
  return shorten(configDescription(root) ?? readmeParagraph(root) ?? "");
}

function configDescription(root: string): string | undefined {
  for (const name of ["lds.json", "context7.json"]) {
    try {
      const parsed = JSON.parse(fs.readFileSync(path.join(root, name), "utf8")) as { description?: unknown };
      if (typeof parsed.description === "string" && parsed.description.trim()) return parsed.description;
    } catch {
      // absent or not JSON: the next source
    }
  }
  return undefined;
}

function readmeParagraph(root: string): string | undefined {
  const name = fs.readdirSync(root).find((entry) => /^readme(\.(md|markdown|mdx|rst|txt))?$/i.test(entry));
  if (!name) return undefined;
  const file = path.join(root, name);
  if (!fs.lstatSync(file).isFile()) return undefined; // a link may point outside the repository
  const fd = fs.openSync(file, "r");
  let head: string;
  try {
    const buffer = Buffer.alloc(README_HEAD_BYTES);
    head = buffer.subarray(0, fs.readSync(fd, buffer, 0, buffer.length, 0)).toString("utf8");
  } finally {
    fs.closeSync(fd);
  }
  const withoutBlocks = head
    .replace(/<!--[\s\S]*?-->/g, "")
    .replace(/^(```|~~~)[\s\S]*?^\1/gm, "")
    .replace(/<[^>]+>/g, " ");
  for (const paragraph of withoutBlocks.split(/\n\s*\n/)) {
    const text = plain(paragraph);
    // Prose: a sentence's worth of letters, not a line of badges, a heading or an rst directive.
    if ((text.match(/\p{L}/gu) ?? []).length >= 20) return text;
  }
  return undefined;
}

/** Markdown and rst markup of one paragraph reduced to its words. */
function plain(paragraph: string): string {
  return paragraph
    .split("\n")
    .filter((line) => !/^\s*(#|=+\s*$|-+\s*$|\.\. |\||>\s*\[!)/.test(line))
    .join(" ")
    .replace(/!\[[^\]]*\]\([^)]*\)/g, "")
    .replace(/\[([^\]]*)\]\([^)]*\)/g, "$1")
    .replace(/\[([^\]]*)\]\[[^\]]*\]/g, "$1")
    .replace(/[*_`]+/g, "")
    .replace(/\s+/g, " ")
    .trim();
}

function shorten(text: string): string {
  const clean = text.replace(/\s+/g, " ").trim();
  if (clean.length <= MAX_CHARS) return clean;
  const cut = clean.slice(0, MAX_CHARS - 1);
  return `${cut.slice(0, Math.max(cut.lastIndexOf(" "), MAX_CHARS / 2))}…`;
}
