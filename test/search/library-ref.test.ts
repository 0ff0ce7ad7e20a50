import { describe, expect, it } from "vitest";
import { contextAsText } from "../../src/search/context-text.js";
import { parseLibraryRef } from "../../src/search/library-ref.js";
import { privateScope, privateScopeOf } from "../../src/util/library-id.js";

describe("library ids as clients send them", () => {
  it("reads /owner/repo, /<source>/<id>, and versions pinned with / or @", () => {
    expect(parseLibraryRef("/vercel/next.js")).toEqual([{ libraryId: "/vercel/next.js", version: "" }]);
    expect(parseLibraryRef("/wiki/eng")).toEqual([{ libraryId: "/wiki/eng", version: "" }]);
    expect(parseLibraryRef("/vercel/next.js/v15.1.8")).toEqual([
      { libraryId: "/vercel/next.js/v15.1.8", version: "" },
      { libraryId: "/vercel/next.js", version: "v15.1.8" },
    ]);
    expect(parseLibraryRef("/vercel/next.js@v15.1.8")).toEqual([{ libraryId: "/vercel/next.js", version: "v15.1.8" }]);
    expect(parseLibraryRef("/git.example.com:8443/acme/widgets/v2")[1]).toEqual({ libraryId: "/git.example.com:8443/acme/widgets", version: "v2" });
  });

  it("accepts every id LDS creates: private ones with a host and port, wiki spaces with '~', and the ids before 0.7.11", () => {
    for (const id of [
      "/~team-2/acme/internal",
      "/~team-2/127.0.0.1:40145/owner/repo",
      "/~team-2/127.0.0.1:40145/group/sub/repo",
      "/~team-12/wiki/~jdoe",
      "/~team-12/wiki/eng",
      "/team-2/127.0.0.1:40145/owner/repo",
      "/team-2/wiki/~jdoe",
      "/git.example.com:8443/a/b/c/d/e/f",
      "/my_org/my_repo.js",
      "/~team-2/my_org/my_repo",
    ]) {
      expect(parseLibraryRef(id)[0], id).toEqual({ libraryId: id, version: "" });
      expect(parseLibraryRef(`${id}@v1.2`), id).toEqual([{ libraryId: id, version: "v1.2" }]);
    }
    expect(parseLibraryRef("/~team-2/127.0.0.1:40145/owner/repo/v1")[1]).toEqual({ libraryId: "/~team-2/127.0.0.1:40145/owner/repo", version: "v1" });
  });

  it("builds and recognises the reserved private namespace, and nothing else as it", () => {
    expect(privateScope(12)).toBe("~team-12");
    expect(privateScopeOf(`/${privateScope(12)}/acme/widgets`)).toBe(12);
    for (const id of ["/team-12/acme/widgets", "/acme/~team-12", "/~team-12x/a", "/~team-0/a/b"]) expect(privateScopeOf(id), id).toBeUndefined();
  });

  it("refuses anything else with invalid_library_id", () => {
    for (const bad of [
      "react",
      "/react",
      "//x/y",
      "/a/b/c/d/e/f/g/h/i",
      "/a/b@",
      "../../etc/passwd",
      "/a/../b",
      "/a/b c",
      "/a:b/c:d",
      "x".repeat(600),
      // '~' only as the reserved scope (and in a wiki key); a port only on a host.
      "/~acme/widgets",
      "/acme/~widgets",
      "/~team-0/a/b",
      "/~team-2/a/b:1",
      "/a/b:80/c",
      "/~team-2/wiki/eng/~x",
      "/acme/wiki/~jdoe",
      "/my_host:80/a/b",
    ]) {
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
