/**
 * A page's YAML front matter (`---` lines at its very start, as Docusaurus, MDX and static site generators read it).
 * Only the two plain fields a page's identity needs are read, `title` and `description`, as one-line scalars (plain
 * or quoted): no YAML library is among the dependencies, and these two are what documentation sites put there. The
 * whole block is cut from the text either way, so that its keys are never indexed as words.
 */
export interface FrontMatter {
  title?: string;
  description?: string;
  /** The text after the front matter (the whole text when there is none). */
  body: string;
}

const BLOCK = /^---[ \t]*\n([\s\S]*?)\n(?:---|\.\.\.)[ \t]*(?:\n|$)/;

export function readFrontMatter(text: string): FrontMatter {
  const block = BLOCK.exec(text);
  if (!block) return { body: text };
  const fields: FrontMatter = { body: text.slice(block[0].length) };
  for (const line of block[1]!.split("\n")) {
    const field = /^(title|description)\s*:\s*(.*?)\s*$/.exec(line);
    if (!field) continue;
    const value = unquote(field[2]!);
    if (value) fields[field[1] as "title" | "description"] = value;
  }
  return fields;
}

function unquote(value: string): string {
  const quoted = /^(["'])(.*)\1$/.exec(value);
  if (!quoted) return value.replace(/\s+#.*$/, "");
  return quoted[1] === "'" ? quoted[2]!.replace(/''/g, "'") : quoted[2]!.replace(/\\"/g, '"');
}
