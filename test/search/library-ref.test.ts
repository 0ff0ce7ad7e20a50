import { describe, expect, it } from "vitest";
import { contextAsText } from "../../src/search/context-text.js";
import { parseLibraryRef, resolveLibraryRef } from "../../src/search/library-ref.js";

describe("library ids as clients send them", () => {
  it("reads /owner/repo, /<source>/<id>, and versions pinned with / or @", async () => {
    const known = new Set(["/vercel/next.js", "/wiki/eng", "/git.example.com:8443/acme/widgets", "/team-3/acme/internal"]);
    const resolve = (raw: string) => resolveLibraryRef(raw, async (ids) => new Set(ids.filter((id) => known.has(id))));
    expect(await resolve("/vercel/next.js")).toEqual({ libraryId: "/vercel/next.js", version: "" });
    expect(await resolve("/wiki/eng")).toEqual({ libraryId: "/wiki/eng", version: "" });
    expect(await resolve("/vercel/next.js/v15.1.8")).toEqual({ libraryId: "/vercel/next.js", version: "v15.1.8" });
    expect(await resolve("/vercel/next.js@v15.1.8")).toEqual({ libraryId: "/vercel/next.js", version: "v15.1.8" });
    // Ids of other hosts and of private libraries have more segments: the whole path wins over a version reading.
    expect(await resolve("/git.example.com:8443/acme/widgets")).toEqual({ libraryId: "/git.example.com:8443/acme/widgets", version: "" });
    expect(await resolve("/git.example.com:8443/acme/widgets/v2")).toEqual({ libraryId: "/git.example.com:8443/acme/widgets", version: "v2" });
    expect(await resolve("/team-3/acme/internal")).toEqual({ libraryId: "/team-3/acme/internal", version: "" });
    // Nothing known: the plain reading, so that "not found" names what the client sent.
    expect(await resolve("/nobody/here/v1")).toEqual({ libraryId: "/nobody/here/v1", version: "" });
  });

  it("refuses anything else with invalid_library_id", () => {
    for (const bad of ["react", "/react", "//x/y", "/a/b/c/d/e/f/g/h/i", "/a/b@", "../../etc/passwd", "/a/../b", "/a/b c", "/a:b/c:d", "x".repeat(600)]) {
      expect(() => parseLibraryRef(bad), bad).toThrow(expect.objectContaining({ code: "invalid_library_id" }));
    }
  });

  it("fences code containing backticks with a longer fence, so that it cannot end the block early", () => {
    const code = "const md = `x`;\n```\nnot the end\n```";
    const text = contextAsText({
      libraryId: "/a/b",
      snippets: [{ codeTitle: "T", codeDescription: "", codeLanguage: "js", codeTokens: 9, codeId: "a.md#t", pageTitle: "a", codeList: [{ language: "js", code }] }],
    });
    expect(text).toContain("````js\n" + code + "\n````");
  });
});
