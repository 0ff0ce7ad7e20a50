import { randomBytes } from "node:crypto";
import { describe, expect, it } from "vitest";
import { isLdsError } from "../../src/errors.js";
import { seal, unseal } from "../../src/secrets/seal.js";

const key = randomBytes(32);

function expectTampered(fn: () => unknown) {
  let caught: unknown;
  try {
    fn();
  } catch (err) {
    caught = err;
  }
  expect(isLdsError(caught, "secret_tampered")).toBe(true);
  // The message must never echo the secret or the sealed value.
  expect((caught as Error).message).not.toMatch(/hunter2|lds:v1:/);
}

describe("sealed secrets", () => {
  it("round-trip with a versioned prefix and a fresh IV each time", () => {
    const a = seal(key, "hunter2", "s3.secret");
    const b = seal(key, "hunter2", "s3.secret");
    expect(a).toMatch(/^lds:v1:[A-Za-z0-9_-]+$/);
    expect(a).not.toBe(b);
    expect(a).not.toContain("hunter2");
    expect(unseal(key, a, "s3.secret")).toBe("hunter2");
  });

  it("detect a flipped byte anywhere", () => {
    const sealed = seal(key, "hunter2", "n");
    const raw = Buffer.from(sealed.slice(7), "base64url");
    for (const position of [0, 13, raw.length - 1]) {
      const copy = Buffer.from(raw);
      copy[position]! ^= 0x01;
      expectTampered(() => unseal(key, "lds:v1:" + copy.toString("base64url"), "n"));
    }
  });

  it("refuse another key, another context, a truncated or unknown value", () => {
    const sealed = seal(key, "hunter2", "a");
    expectTampered(() => unseal(randomBytes(32), sealed, "a"));
    expectTampered(() => unseal(key, sealed, "b"));
    expectTampered(() => unseal(key, sealed.slice(0, 20), "a"));
    expectTampered(() => unseal(key, "plain-text", "a"));
  });
});
