import { describe, expect, it } from "vitest";
import { contextAsText } from "../../src/search/context-text.js";
import { parseLibraryRef } from "../../src/search/library-ref.js";

describe("library ids as clients send them", () => {
  it("reads /owner/repo, /<source>/<id>, and versions pinned with / or @", () => {
    expect(parseLibraryRef("/vercel/next.js")).toEqual({ libraryId: "/vercel/next.js", version: "" });
    expect(parseLibraryRef("/wiki/eng")).toEqual({ libraryId: "/wiki/eng", version: "" });
    expect(parseLibraryRef("/vercel/next.js/v15.1.8")).toEqual({ libraryId: "/vercel/next.js", version: "v15.1.8" });
    expect(parseLibraryRef("/vercel/next.js@v15.1.8")).toEqual({ libraryId: "/vercel/next.js", version: "v15.1.8" });
  });

  it("refuses anything else with invalid_library_id", () => {
    for (const bad of ["react", "/react", "//x/y", "/a/b/c/d", "/a/b@", "../../etc/passwd", "/a/b c", "x".repeat(600)]) {
      expect(() => parseLibraryRef(bad), bad).toThrow(expect.objectContaining({ code: "invalid_library_id" }));
    }
  });

  it("fences code containing backticks with a longer fence, so that it cannot end the block early", () => {
    const code = "const md = `x`;\n```\nnot the end\n```";
    const text = contextAsText({
      snippets: [{ codeTitle: "T", codeDescription: "", codeLanguage: "js", codeTokens: 9, codeId: "a.md#t", pageTitle: "a", codeList: [{ language: "js", code }] }],
    });
    expect(text).toContain("````js\n" + code + "\n````");
  });
});
