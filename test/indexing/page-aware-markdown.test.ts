import fs from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { parseMarkdown } from "../../src/indexing/markdown.js";

/** A page of the real documentation an npm package ships (the quality benchmark's corpus, pinned in package.json). */
function realPage(pkg: string, page: string): { text: string; sourcePath: string } {
  return { text: fs.readFileSync(path.join("node_modules", pkg, page), "utf8"), sourcePath: page };
}

describe("Markdown and MDX pages: their title, and no markup indexed as words", () => {
  it("titles every snippet's page from the front matter, else the first level-1 heading, else the file name", () => {
    const front = parseMarkdown('---\ntitle: "Worker pools"\ndescription: How pools run tasks\nsidebar_position: 2\n---\n\n## Sizing\n\nSet the maximum number of threads here.\n', "docs/pools.mdx");
    expect(front.map((s) => s.pageTitle)).toEqual(["Worker pools"]);
    // The front matter's keys are not words of any snippet.
    expect(front.map((s) => `${s.title} ${s.description} ${s.content}`).join(" ")).not.toMatch(/sidebar_position|description:/);
    const h1 = parseMarkdown("Intro text before any heading here.\n\n# The Server\n\n## Listen\n\nCall listen with a port number.\n", "docs/Server.md");
    expect(new Set(h1.map((s) => s.pageTitle))).toEqual(new Set(["The Server"]));
    expect(h1[0]!.title).toBe("The Server");
    const bare = parseMarkdown("## Options\n\nEvery option has a default value.\n", "docs/api-overview.md");
    expect(bare[0]!.pageTitle).toBe("api overview");
  });

  it("drops MDX imports and exports and tag-only JSX lines, keeps imports inside code, and strips heading anchors", () => {
    const page = [
      "import Tabs from '@theme/Tabs';",
      'import TabItem from "@theme/TabItem";',
      "export const meta = { x: 1 };",
      "",
      "# Install {#install-page}",
      "",
      '<Tabs groupId="pm">',
      '<TabItem value="npm">',
      "",
      "Install the package with your package manager of choice.",
      "",
      "```js",
      "import Tabs from '@theme/Tabs';",
      "```",
      "",
      "</TabItem>",
      "</Tabs>",
      "",
      '## <a id="opts"></a> The [options](#options) `object` {#the-options}',
      "",
      'Each option <a name="old"></a>is described below in detail.',
    ].join("\n");
    const snippets = parseMarkdown(page, "docs/install.mdx");
    expect(snippets.map((s) => [s.kind, s.title, s.anchor, s.description, s.content])).toEqual([
      ["code", "Install", "install-page", "Install the package with your package manager of choice.", "import Tabs from '@theme/Tabs';"],
      ["info", "The options object", "the-options", "Each option is described below in detail.", "Each option is described below in detail."],
    ]);
    expect(snippets.every((s) => s.pageTitle === "Install")).toBe(true);
  });

  it("reads a real Docusaurus page of piscina's docs: its front matter is not words, its code keeps its imports", () => {
    const { text, sourcePath } = realPage("piscina", "docs/docs/api-reference/class.md");
    expect(text.startsWith("---\nid: Instance\nsidebar_position: 2\n---")).toBe(true);
    const snippets = parseMarkdown(text, sourcePath);
    expect(snippets.length).toBeGreaterThan(10);
    expect(snippets.every((s) => s.pageTitle === "class")).toBe(true);
    expect(snippets.some((s) => /sidebar_position|id: Instance/.test(`${s.description}\n${s.content}`))).toBe(false);
    expect(snippets[0]).toMatchObject({ title: "Class: Piscina", anchor: "class-piscina" });
    expect(snippets.some((s) => s.kind === "code" && s.content.includes("import { Piscina } from 'piscina';"))).toBe(true);
  });
});
