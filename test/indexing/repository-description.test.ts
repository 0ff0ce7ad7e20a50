import fs from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { repositoryDescription } from "../../src/indexing/repository-description.js";
import { libraryScores } from "../../src/search/library-scores.js";
import { tempDir } from "../helpers/temp.js";

function repo(files: Record<string, string>): string {
  const root = tempDir("lds-describe-");
  for (const [name, text] of Object.entries(files)) {
    fs.mkdirSync(path.dirname(path.join(root, name)), { recursive: true });
    fs.writeFileSync(path.join(root, name), text);
  }
  return root;
}

describe("a repository's description (issue 13)", () => {
  it("is the README's first paragraph of prose, without badges, images, headings, HTML or code", () => {
    const root = repo({
      "README.md": [
        "<!-- generated -->",
        '<p align="center"><img src="logo.png"></p>',
        "# Quarry",
        "",
        "[![npm](https://img.shields.io/npm/v/quarry.svg)](https://npm.im/quarry) [![ci](x.svg)](y)",
        "",
        "```sh\nnpm install quarry\n```",
        "",
        "**Quarry** is a [job queue](docs/queue.md) for Node.js with retries,",
        "delays and a `dead letter` queue.",
        "",
        "## Install",
      ].join("\n"),
    });
    expect(repositoryDescription(root)).toBe("Quarry is a job queue for Node.js with retries, delays and a dead letter queue.");
  });

  it("prefers the description of lds.json or context7.json, and is cut at a word within 300 characters", () => {
    expect(repositoryDescription(repo({ "README.md": "# X\n\nThe README's own words about this project here.\n", "context7.json": JSON.stringify({ description: "What context7.json says." }) }))).toBe(
      "What context7.json says.",
    );
    const long = repositoryDescription(repo({ "readme.rst": `Widgets\n=======\n\n${"word ".repeat(200)}\n` }));
    expect(long.length).toBeLessThanOrEqual(300);
    expect(long).toMatch(/^word word .* word…$/);
    expect(repositoryDescription(repo({ "src/index.js": "x" }))).toBe("");
    expect(repositoryDescription(repo({ "README.md": "# Only a title\n\n[![badge](b.svg)](c)\n" }))).toBe("");
  });
});

describe("the scores of a search result", () => {
  const now = Date.parse("2026-11-22T00:00:00Z");
  it("trust a fresh, healthy, described source most, and count documentation in tenfolds", () => {
    expect(libraryScores({ lastFetched: "2026-11-20T00:00:00Z", failed: false, hasDescription: true, totalSnippets: 99 }, now)).toEqual({ trustScore: 10, benchmarkScore: 50, stars: -1 });
    expect(libraryScores({ lastFetched: "2026-08-01T00:00:00Z", failed: false, hasDescription: true, totalSnippets: 0 }, now).trustScore).toBe(7);
    expect(libraryScores({ lastFetched: "2020-01-01T00:00:00Z", failed: true, hasDescription: false, totalSnippets: 1e6 }, now)).toEqual({ trustScore: 0, benchmarkScore: 100, stars: -1 });
  });
});
