/**
 * A page's YAML front matter (`---` lines at its very start, as Docusaurus, MDX and static site generators read it).
 * Only the two plain fields a page's identity needs are read, `title` and `description`, as one-line scalars (plain
 * or quoted): no YAML library is among the dependencies, and these two are what documentation sites put there. The
 * whole block is cut from the text either way, so that its keys are never indexed as words. A page may also open
 * with a horizontal rule (`---`) and a later one: the text between is front matter only when it reads as YAML
 * (see looksLikeYaml), else it is the page's intro and stays.
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
  if (!block || !looksLikeYaml(block[1]!)) return { body: text };
  const fields: FrontMatter = { body: text.slice(block[0].length) };
  for (const line of block[1]!.split("\n")) {
    const field = /^(title|description)\s*:\s*(.*?)\s*$/.exec(line);
    if (!field) continue;
    const value = unquote(field[2]!);
    if (value) fields[field[1] as "title" | "description"] = value;
  }
  return fields;
}

/**
 * Every non-blank line is a `key:` line, a `- ` list item, an indented continuation or a `#` comment, and at least
 * one is a key: a block of comments alone (`# Title` between two rules) is a heading, not front matter.
 */
function looksLikeYaml(block: string): boolean {
  const lines = block.split("\n").filter((line) => line.trim());
  const yamlLine = (line: string) => YAML_KEY.test(line) || /^-(\s|$)/.test(line) || /^[ \t]+\S/.test(line) || /^#/.test(line);
  return lines.every(yamlLine) && lines.some((line) => YAML_KEY.test(line));
}

/** `title: x`, `sidebar_position: 2`, `"og:image": …`, `tags:` (a value on the next lines): a key, a colon, then space or the end. */
const YAML_KEY = /^(?:[\w.-]+|"[^"]*"|'[^']*')[ \t]*:(?:\s|$)/;

function unquote(value: string): string {
  const quoted = /^(["'])(.*)\1$/.exec(value);
  if (!quoted) return value.replace(/\s+#.*$/, "");
  return quoted[1] === "'" ? quoted[2]!.replace(/''/g, "'") : quoted[2]!.replace(/\\"/g, '"');
}
