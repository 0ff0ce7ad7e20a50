import fs from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { ROOT } from "./helpers/cli.js";

/**
 * The dependency direction of src/ (docs/architecture.md): shells → ops → domain → volume → store → util.
 * A folder may import its own layer's folders one way, and any layer below; never a layer above.
 */
const LAYERS: string[][] = [
  ["cli", "server"],
  ["ops"],
  ["search", "indexing", "archive", "snapshot", "destinations", "sources", "admin", "licence"],
  ["volume", "vectors", "text"],
  ["store", "config", "secrets"],
  ["util", "errors.ts", "version.ts"],
];
const layerOf = (folder: string) => LAYERS.findIndex((layer) => layer.includes(folder));

/** Every relative import of every source file, as [importing folder, imported folder, file]. */
function importEdges(): Array<[string, string, string]> {
  const src = path.join(ROOT, "src");
  const edges: Array<[string, string, string]> = [];
  const walk = (dir: string) => {
    for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
      const full = path.join(dir, entry.name);
      if (entry.isDirectory()) walk(full);
      else if (entry.name.endsWith(".ts")) {
        const text = fs.readFileSync(full, "utf8");
        const from = path.relative(src, full).split(path.sep)[0]!;
        for (const match of text.matchAll(/(?:from|import)\s*\(?\s*"(\.[^"]+)"/g)) {
          const to = path.relative(src, path.resolve(path.dirname(full), match[1]!)).split(path.sep)[0]!.replace(/\.js$/, ".ts");
          if (to !== from) edges.push([from, to, path.relative(src, full)]);
        }
      }
    }
  };
  walk(src);
  return edges;
}

describe("the architecture of src/", () => {
  const edges = importEdges();

  it("knows the layer of every folder", () => {
    const folders = new Set(edges.flatMap(([from, to]) => [from, to]));
    expect([...folders].filter((f) => layerOf(f) < 0)).toEqual([]);
  });

  it("has no import of a layer above", () => {
    const upward = edges.filter(([from, to]) => layerOf(to) < layerOf(from)).map(([from, to, file]) => `${file} imports ${to}/`);
    expect(upward).toEqual([]);
  });

  it("has no two folders that import each other", () => {
    const pairs = new Set(edges.map(([from, to]) => `${from}>${to}`));
    const ties = [...pairs].filter((pair) => pairs.has(pair.split(">").reverse().join(">")));
    expect(ties).toEqual([]);
  });
});
