import type { CodeSnippetAnswer, ContextAnswer, InfoSnippetAnswer } from "./context.js";

const SEPARATOR = "\n\n----------------------------------------\n\n";

/**
 * The `type=txt` rendering: one block per snippet in rank order, for pasting into a prompt or reading in a
 * terminal. Code: title, source, description, fenced code. Info: breadcrumb, source, prose.
 */
export function contextAsText(answer: ContextAnswer): string {
  return answer.snippets.map((item) => ("codeList" in item ? codeBlock(item) : infoBlock(item))).join(SEPARATOR) + (answer.snippets.length ? "\n" : "");
}

function codeBlock(item: CodeSnippetAnswer): string {
  const lines = [`### ${item.codeTitle}`, "", `Source: ${item.codeId}`];
  if (item.codeDescription) lines.push("", item.codeDescription);
  for (const code of item.codeList) lines.push("", fence(code.code, code.language));
  return lines.join("\n");
}

function infoBlock(item: InfoSnippetAnswer): string {
  return [`### ${item.breadcrumb}`, "", `Source: ${item.pageId}`, "", item.content].join("\n");
}

/** A fence longer than any backtick run inside the code, so that code containing ``` cannot end it early. */
function fence(code: string, language: string): string {
  const longest = Math.max(2, ...(code.match(/`+/g) ?? []).map((run) => run.length));
  const ticks = "`".repeat(longest + 1);
  return `${ticks}${language}\n${code}\n${ticks}`;
}
