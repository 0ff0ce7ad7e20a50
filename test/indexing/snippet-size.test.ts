import fs from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { parseMarkdown } from "../../src/indexing/markdown.js";
import { parseRst } from "../../src/indexing/rst.js";
import { estimateTokens } from "../../src/indexing/snippet.js";
import { MAX_SNIPPET_TOKENS, piecesWithin } from "../../src/indexing/snippet-size.js";
import { CONTEXT_TOKENS } from "../../src/search/context-budget.js";

/** A page of the real documentation an npm package ships (the quality benchmark's corpus, pinned in package.json). */
const realPage = (pkg: string, page: string) => fs.readFileSync(path.join("node_modules", pkg, page), "utf8");
/** What an answer charges for a snippet (search/context.ts). */
const cost = (s: { title: string; description: string; content: string; sourcePath: string; anchor: string | null }) =>
  estimateTokens(`${s.title}\n${s.description}\n${s.content}\n${s.sourcePath}#${s.anchor ?? ""}`);
const words = (text: string) => text.split(/\s+/).filter(Boolean);

describe("a hard upper size per snippet", () => {
  it("cuts fastify's community list (one section of over 8,000 tokens) at its paragraphs, losing no word", () => {
    const text = realPage("fastify", "docs/Guides/Ecosystem.md");
    const snippets = parseMarkdown(text, "docs/Guides/Ecosystem.md");
    const community = snippets.filter((s) => s.anchor === "community");
    expect(community.length).toBeGreaterThan(2);
    for (const s of snippets) {
      expect(estimateTokens(s.content)).toBeLessThanOrEqual(MAX_SNIPPET_TOKENS);
      expect(cost(s)).toBeLessThanOrEqual(CONTEXT_TOKENS.default);
    }
    // Every piece ends at a list item's end: no line is cut in two.
    const lines = new Set(text.split("\n").map((l) => l.trim()));
    for (const s of community) for (const line of [s.content.split("\n")[0]!, s.content.split("\n").at(-1)!]) expect(lines.has(line.trim())).toBe(true);
    // The pieces, joined, are the section's text: every word in its order.
    const section = text.slice(text.indexOf("#### [Community](#community)\n") + 30, text.indexOf("#### [Community Tools]"));
    expect(words(community.map((s) => s.content).join("\n"))).toEqual(words(section));
  });

  it("cuts fastify's table of every error code at line ends, each piece a run of whole rows", () => {
    const text = realPage("fastify", "docs/Reference/Errors.md");
    const lines = new Set(text.split("\n"));
    const snippets = parseMarkdown(text, "docs/Reference/Errors.md");
    const table = snippets.filter((s) => s.kind === "info" && /^\| <a id="fst_err_/m.test(s.content));
    expect(table.length).toBeGreaterThan(1);
    for (const s of snippets) expect(estimateTokens(s.content)).toBeLessThanOrEqual(MAX_SNIPPET_TOKENS);
    for (const s of table) for (const row of s.content.split("\n")) expect(lines.has(row)).toBe(true);
  });

  it("cuts a long code block into whole code snippets at its blank lines, each fenced on its own, indentation kept", () => {
    const part = (i: number) => `function part${i}() {\n  return ${JSON.stringify("x".repeat(900))};\n}\n`;
    const code = Array.from({ length: 12 }, (_, i) => part(i)).join("\n");
    const snippets = parseMarkdown(`# Big\n\nAll the parts, in order:\n\n\`\`\`js\n${code}\`\`\`\n\nAfter the code.\n`, "docs/big.md");
    const pieces = snippets.filter((s) => s.kind === "code");
    expect(pieces.length).toBeGreaterThan(1);
    expect(pieces.every((s) => s.language === "js" && s.description === "All the parts, in order:" && !s.content.includes("```"))).toBe(true);
    expect(pieces.every((s) => /^function part\d+\(\) \{$/m.test(s.content.split("\n")[0]!) && s.content.endsWith("}"))).toBe(true);
    expect(pieces.map((s) => s.content).join("\n\n")).toBe(code.trimEnd());
    expect(pieces.every((s) => s.content.includes('\n  return "x'))).toBe(true);
  });

  it("keeps a text within the limit as it is, and cuts a single over-long line at spaces or, failing that, anywhere", () => {
    expect(piecesWithin("short text", 10)).toEqual(["short text"]);
    const line = Array.from({ length: 50 }, (_, i) => `word${i}`).join(" ");
    const pieces = piecesWithin(line, 20);
    expect(pieces.every((p) => p.length <= 80)).toBe(true);
    expect(pieces.join(" ")).toBe(line);
    expect(piecesWithin("y".repeat(200), 10)).toEqual(["y".repeat(40), "y".repeat(40), "y".repeat(40), "y".repeat(40), "y".repeat(40)]);
  });

  it("holds for reStructuredText too, which is read through the same parser", () => {
    const rst = `Options\n=======\n\n${Array.from({ length: 40 }, (_, i) => `Option number ${i} ${"explains itself at length ".repeat(20)}`).join("\n\n")}\n`;
    const snippets = parseRst(rst, "docs/options.rst");
    expect(snippets.length).toBeGreaterThan(1);
    for (const s of snippets) expect(estimateTokens(s.content)).toBeLessThanOrEqual(MAX_SNIPPET_TOKENS);
  });
});
