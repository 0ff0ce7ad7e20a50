import { describe, expect, it } from "vitest";
import { parseMarkdown } from "../../src/indexing/markdown.js";
import { parseRst } from "../../src/indexing/rst.js";

/** Every word a page's snippets carry: titles, descriptions and contents. */
function wordsOf(snippets: ReturnType<typeof parseMarkdown>): string {
  return snippets.map((s) => `${s.title}\n${s.description}\n${s.content}`).join("\n");
}

describe("markup-noise removal keeps what a reader reads", () => {
  it("keeps a page's intro between two horizontal rules, and still cuts real front matter", () => {
    const ruled = parseMarkdown(
      ["---", "", "Connection pooling keeps sockets open between requests to the same origin.", "", "---", "", "## Limits", "", "Each pool holds at most ten connections by default."].join("\n"),
      "docs/pooling.md",
    );
    expect(ruled.map((s) => [s.title, s.content])).toEqual([
      ["pooling", "---\n\nConnection pooling keeps sockets open between requests to the same origin.\n\n---"],
      ["Limits", "Each pool holds at most ten connections by default."],
    ]);

    const front = parseMarkdown(
      ["---", "title: Pooling", "# shown in the sidebar", "tags:", "  - http", "- sockets", "sidebar_position: 3", "---", "", "Connection pooling keeps sockets open."].join("\n"),
      "docs/pooling.md",
    );
    expect(front.map((s) => [s.pageTitle, s.content])).toEqual([["Pooling", "Connection pooling keeps sockets open."]]);
  });

  it("keeps tag lines inside indented code and fenced code of a Markdown page", () => {
    const page = [
      "# Maven",
      "",
      "Add the dependency to your pom:",
      "",
      "    <dependency>",
      "      <groupId>org.example</groupId>",
      "",
      "    </dependency>",
      "",
      "Or with the fence:",
      "",
      "```xml",
      "  <dependency>",
      "  </dependency>",
      "```",
      "",
      "<details>",
      "Outside code a tag-only line is markup and goes.",
      "</details>",
    ].join("\n");
    const snippets = parseMarkdown(page, "docs/maven.md");
    const words = wordsOf(snippets);
    expect(words).toContain("    <dependency>\n      <groupId>org.example</groupId>\n\n    </dependency>");
    expect(snippets.find((s) => s.kind === "code")?.content).toBe("  <dependency>\n  </dependency>");
    expect(words).not.toMatch(/<\/?details>/);
  });

  it("keeps <…> inside a heading's code span and reads import/export lines as markup only in .mdx pages", () => {
    const heading = parseMarkdown("## `Promise<void>` return <em>type</em>\n\nThe call resolves once the pool has drained.\n", "docs/api.md");
    expect(heading[0]).toMatchObject({ title: "Promise<void> return type", anchor: "promisevoid-return-type" });
    expect(parseMarkdown("## The `max_threads` option\n\nIt caps the pool's threads at a fixed number.\n", "docs/api.md")[0]!.title).toBe("The max_threads option");
    expect(parseMarkdown("### [`Pool<T>`](#pool) *class*\n\nA pool runs tasks on its worker threads.\n", "docs/api.md")[0]!.title).toBe("Pool<T> class");

    const prose = ["# Migrating", "", "export default now returns the plugin, so update your entry file.", "", "import paths keep working as before in this release."].join("\n");
    expect(wordsOf(parseMarkdown(prose, "docs/migrating.md"))).toContain("export default now returns the plugin");
    expect(wordsOf(parseMarkdown(prose, "docs/migrating.txt"))).toContain("export default now returns the plugin");
    const rst = ["Migrating", "=========", "", "export default now returns the plugin, so update your entry file."].join("\n");
    expect(wordsOf(parseRst(rst, "docs/migrating.rst"))).toContain("export default now returns the plugin");
    expect(wordsOf(parseMarkdown(prose, "docs/migrating.mdx"))).not.toContain("export default");
  });
});
