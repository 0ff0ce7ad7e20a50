import fs from "node:fs";
import { expect, it } from "vitest";
import { createMemoryStore } from "../memory-store/memory-store.js";
import { describeStoreContract } from "./describe-store-contract.js";

describeStoreContract("the in-memory engine", async () => {
  const { store, seed } = createMemoryStore();
  return { store, seed, close: async () => {} };
});

/**
 * What the in-memory engine may import: Node, itself, the contract and its record types, errors and sealing, and the
 * engine-neutral helpers of a one-process engine (request windows in memory, turns per key).
 */
const ALLOWED = [/^node:/, /^\.\/[\w-]+\.js$/, /^\.\.\/\.\.\/\.\.\/src\/(store\/(store|records|record-values|request-windows-in-memory)|errors|secrets\/seal|util\/turns-by-key)\.js$/];

it("the in-memory engine imports no SQLite and no module of the SQLite engine, only the contract", () => {
  const folder = new URL("../memory-store/", import.meta.url);
  const files = fs.readdirSync(folder).filter((f) => f.endsWith(".ts"));
  expect(files.length).toBeGreaterThan(5);
  for (const file of files) {
    const text = fs.readFileSync(new URL(file, folder), "utf8");
    const specifiers = [...text.matchAll(/\bfrom\s+["']([^"']+)["']|\bimport\s*\(\s*["']([^"']+)["']/g)].map((m) => m[1] ?? m[2]!);
    for (const specifier of specifiers)
      expect(
        ALLOWED.some((pattern) => pattern.test(specifier)),
        `${file} imports ${specifier}`,
      ).toBe(true);
    expect(text).not.toMatch(/better-sqlite3|sqlite-vec/);
  }
});
