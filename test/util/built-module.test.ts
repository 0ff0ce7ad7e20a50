import { describe, expect, it } from "vitest";
import { builtModule } from "../../src/util/built-module.js";

describe("the module a worker thread loads", () => {
  it("is the sibling itself when running built, and its copy under dist/ when running from the sources", () => {
    expect(builtModule("file:///opt/lds/dist/util/worker.js", "./worker-entry.js").href).toBe("file:///opt/lds/dist/util/worker-entry.js");
    expect(builtModule("file:///home/me/src/lds/src/vectors/knn-worker.ts", "./knn-worker-entry.js").href).toBe("file:///home/me/src/lds/dist/vectors/knn-worker-entry.js");
  });
});
