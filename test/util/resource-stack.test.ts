import { describe, expect, it } from "vitest";
import { resourceStack } from "../../src/util/resource-stack.js";

describe("resourceStack", () => {
  it("closes the last registered first, waiting for each closer before the next", async () => {
    const closed: string[] = [];
    const stack = resourceStack();
    stack.defer(() => closed.push("lock"));
    stack.defer(async () => {
      await new Promise((resolve) => setImmediate(resolve));
      closed.push("volume");
    });
    stack.defer(() => closed.push("app"));
    await stack.unwind();
    expect(closed).toEqual(["app", "volume", "lock"]);
  });

  it("runs every closer when one fails, then throws the first failure", async () => {
    const closed: string[] = [];
    const stack = resourceStack();
    stack.defer(() => closed.push("lock"));
    stack.defer(() => {
      throw new Error("thread would not stop");
    });
    stack.defer(() => Promise.reject(new Error("app would not close")));
    await expect(stack.unwind()).rejects.toThrow("app would not close");
    expect(closed).toEqual(["lock"]);
  });

  it("closes each resource once, however often it is unwound", async () => {
    let closes = 0;
    const stack = resourceStack();
    stack.defer(() => closes++);
    await stack.unwind();
    await stack.unwind();
    expect(closes).toBe(1);
  });
});
