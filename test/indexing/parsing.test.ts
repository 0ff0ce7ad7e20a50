import fs from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { collectDocuments } from "../../src/indexing/collect.js";
import { parseMarkdown } from "../../src/indexing/markdown.js";
import { parseNotebook } from "../../src/indexing/notebook.js";
import { parseRst } from "../../src/indexing/rst.js";
import { tempDir } from "../helpers/temp.js";

const GUIDE = `# Widgets

Widgets are small reusable parts that render a value. This page explains how to install and configure them.

## Installation

Install the package with npm before anything else.

\`\`\`bash
npm install widgets
\`\`\`

## Configure the size

Pass a size between one and five to the constructor to control the width of the widget.

\`\`\`ts
const w = new Widget({ size: 3 });
\`\`\`
`;

describe("parsing documentation", () => {
  it("turns code blocks into code snippets titled by their section and described by the prose before them", () => {
    const snippets = parseMarkdown(GUIDE, "docs/guide.md");
    const code = snippets.filter((s) => s.kind === "code");
    expect(code).toEqual([
      {
        kind: "code",
        title: "Installation",
        description: "Install the package with npm before anything else.",
        language: "bash",
        content: "npm install widgets",
        sourcePath: "docs/guide.md",
        anchor: "installation",
        pageTitle: "Widgets",
      },
      {
        kind: "code",
        title: "Configure the size",
        description: "Pass a size between one and five to the constructor to control the width of the widget.",
        language: "ts",
        content: "const w = new Widget({ size: 3 });",
        sourcePath: "docs/guide.md",
        anchor: "configure-the-size",
        pageTitle: "Widgets",
      },
    ]);
    const info = snippets.filter((s) => s.kind === "info");
    // A paragraph that describes a code block is not repeated as prose (issue 11): only the intro stays an info snippet.
    expect(info.map((s) => s.title)).toEqual(["Widgets"]);
    expect(info[0]!.description).toBe("Widgets are small reusable parts that render a value.");
  });

  it("keeps a short section as prose (a three-word Rollback section is found), and never repeats a code description", () => {
    const page = "# Deploy\n\n## Rollback\n\nRun deploy --undo.\n\n## Build\n\nCompile it first.\n\n```sh\nmake\n```\n\nThen ship the binary to the hosts.\n";
    const snippets = parseMarkdown(page, "docs/deploy.md");
    expect(snippets.filter((s) => s.kind === "info").map((s) => [s.title, s.content])).toEqual([
      ["Rollback", "Run deploy --undo."],
      ["Build", "Then ship the binary to the hosts."],
    ]);
    expect(snippets.find((s) => s.kind === "code")).toMatchObject({ title: "Build", description: "Compile it first.", content: "make" });
  });

  it("reads notebooks and reStructuredText into the same kinds of snippets", () => {
    const notebook = JSON.stringify({
      metadata: { kernelspec: { language: "python" } },
      cells: [
        { cell_type: "markdown", source: ["## Load data\n", "Read the file into a frame with the loader.\n"] },
        { cell_type: "code", source: "df = load('x.csv')" },
      ],
    });
    expect(parseNotebook(notebook, "nb/intro.ipynb").find((s) => s.kind === "code")).toMatchObject({ title: "Load data", language: "python", content: "df = load('x.csv')" });
    expect(parseNotebook("{broken", "x.ipynb")).toEqual([]);

    const rst = "Usage\n=====\n\nCall the client to fetch a page.\n\n.. code-block:: python\n\n   client.fetch(1)\n   client.close()\n";
    expect(parseRst(rst, "docs/usage.rst").find((s) => s.kind === "code")).toMatchObject({ title: "Usage", language: "python", content: "client.fetch(1)\nclient.close()" });
  });

  it("collects documentation files, skipping dependencies, changelogs, translations and versioned pages", () => {
    const root = tempDir();
    const files = [
      "README.md",
      "docs/Guide.MDX",
      "docs/api.rst",
      "docs/notes.txt",
      "nb/intro.ipynb",
      "CHANGELOG.md",
      "LICENSE.md",
      "node_modules/x/README.md",
      "vendor/y.md",
      "docs/i18n/de.md",
      "archive/old.md",
      "versioned_docs/version-1/a.md",
      "docs/v1/a.md",
      "src/index.ts",
      "docs/image.png",
    ];
    for (const f of files) {
      fs.mkdirSync(path.dirname(path.join(root, f)), { recursive: true });
      fs.writeFileSync(path.join(root, f), "# x\n");
    }
    expect(collectDocuments(root)).toEqual(["README.md", "docs/Guide.MDX", "docs/api.rst", "docs/notes.txt", "nb/intro.ipynb"]);
    expect(collectDocuments(root, { skipVersionFiltering: true })).toEqual(expect.arrayContaining(["docs/v1/a.md", "versioned_docs/version-1/a.md"]));

    fs.writeFileSync(path.join(root, "context7.json"), JSON.stringify({ folders: ["docs"], excludeFolders: ["docs/v1"], excludeFiles: ["notes.txt"] }));
    expect(collectDocuments(root, { skipVersionFiltering: true })).toEqual(["docs/Guide.MDX", "docs/api.rst"]);
    fs.writeFileSync(path.join(root, "context7.json"), JSON.stringify({ folders: ["../../etc"] }));
    expect(collectDocuments(root)).toEqual(["README.md", "docs/Guide.MDX", "docs/api.rst", "docs/notes.txt", "nb/intro.ipynb"]);
  });
});
