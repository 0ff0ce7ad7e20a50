import fs from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { ROOT } from "./helpers/cli.js";

/**
 * The dependency direction of src/ (docs/architecture.md): shells → ops → domain → volume → store → util.
 * A folder may import its own layer's folders one way, and any layer below; never a layer above.
 */
const LAYERS: string[][] = [
  ["cli", "server", "ui"],
  ["ops"],
  ["search", "indexing", "archive", "snapshot", "destinations", "sources", "oauth", "admin", "licence"],
  ["volume", "vectors", "text"],
  ["store", "config", "secrets"],
  ["util", "errors.ts", "hints.ts", "version.ts"],
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
      else if (/\.tsx?$/.test(entry.name)) {
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

/** The tables of lds.db, read from its migrations so that a new table is covered without editing this test. */
function ldsTables(): string[] {
  const migrations = fs.readFileSync(path.join(ROOT, "src/store/migrations.ts"), "utf8");
  return [...migrations.matchAll(/CREATE (?:VIRTUAL )?TABLE (\w+)/g)].map((m) => m[1]!);
}

/** Source files outside store/ with SQL that reads or writes a table of lds.db, as "file: statement". */
function sqlOutsideStore(): string[] {
  const tables = ldsTables().join("|");
  const statement = new RegExp(`\\b(FROM|INTO|UPDATE|JOIN|TABLE)\\s+(${tables})\\b`, "g");
  const found: string[] = [];
  const walk = (dir: string) => {
    for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
      const full = path.join(dir, entry.name);
      if (entry.isDirectory()) walk(full);
      else if (entry.name.endsWith(".ts") && !path.relative(path.join(ROOT, "src"), full).startsWith("store" + path.sep)) {
        for (const match of fs.readFileSync(full, "utf8").matchAll(statement)) found.push(`${path.relative(ROOT, full)}: ${match[0]}`);
      }
    }
  };
  walk(path.join(ROOT, "src"));
  return found;
}

/**
 * The SQLite engine's own work, outside store/: opening and migrating lds.db, snapshots, checking and
 * preparing an archive's database copy, and sqlite-vec. Only these may import store/ modules other than the
 * contract (store/store.ts) for more than types; everything else reaches records through `Store`.
 */
const SQLITE_ENGINE_WORK = ["volume/open-volume.ts", "volume/key-rotation.ts", "snapshot/snapshot-volume.ts", "snapshot/canaries.ts", "ops/restore-drill.ts", "archive/check-snapshot.ts", "archive/compatibility.ts", "ops/prepare-restored-db.ts", "vectors/vector-index.ts", "vectors/partition-search.ts", "vectors/knn-worker-entry.ts", "volume/snippet-writer-entry.ts"];

/** Value (not type-only) imports of store/ modules other than store/store.ts, outside store/, as "file: module". */
function storeInternalsUsed(): string[] {
  const src = path.join(ROOT, "src");
  const found: string[] = [];
  const walk = (dir: string) => {
    for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
      const full = path.join(dir, entry.name);
      const rel = path.relative(src, full);
      if (entry.isDirectory()) walk(full);
      else if (entry.name.endsWith(".ts") && !rel.startsWith("store" + path.sep)) {
        for (const match of fs.readFileSync(full, "utf8").matchAll(/^import\s+(type\s+)?\{([^}]*)\}\s+from\s+"(\.[^"]+)"/gm)) {
          const target = path.relative(src, path.resolve(path.dirname(full), match[3]!));
          if (!target.startsWith("store" + path.sep) || target === path.join("store", "store.js")) continue;
          const typeOnly = Boolean(match[1]) || match[2]!.split(",").every((name) => !name.trim() || name.trim().startsWith("type "));
          if (!typeOnly) found.push(`${rel}: ${target}`);
        }
      }
    }
  };
  walk(src);
  return found.filter((use) => !SQLITE_ENGINE_WORK.includes(use.split(":")[0]!));
}

/**
 * Files below the shells that read the process environment (process.env, process["env"], env from node:process),
 * as "file:line". The shells (cli/, server/) read it once and pass parsed settings down; a worker thread is given
 * its settings in workerData.
 */
function environmentReadsBelowShells(): string[] {
  const src = path.join(ROOT, "src");
  const read = /\bprocess\s*(?:\.\s*env\b|\[\s*["'`]env["'`]\s*\])|\bfrom\s+["'](?:node:)?process["']/;
  const found: string[] = [];
  const walk = (dir: string) => {
    for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
      const full = path.join(dir, entry.name);
      const rel = path.relative(src, full);
      if (entry.isDirectory()) {
        if (rel !== "cli" && rel !== "server") walk(full);
      } else if (/\.tsx?$/.test(entry.name)) {
        fs.readFileSync(full, "utf8")
          .split("\n")
          .forEach((line, i) => read.test(line) && found.push(`${rel}:${i + 1}`));
      }
    }
  };
  walk(src);
  return found;
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

  it("keeps every SQL statement against lds.db in store/", () => {
    expect(ldsTables()).toEqual(expect.arrayContaining(["libraries", "snippets", "snippets_fts", "jobs", "secrets", "audit_log"]));
    expect(sqlOutsideStore()).toEqual([]);
  });

  it("reaches the records only through the store's contract, outside the SQLite engine's own work", () => {
    expect(storeInternalsUsed()).toEqual([]);
  });

  it("keeps the dashboard (src/ui, compiled for the browser) apart from the server's code", () => {
    expect(edges.filter(([from, to]) => (from === "ui") !== (to === "ui")).map(([, to, file]) => `${file} imports ${to}`)).toEqual([]);
  });

  it("reads the process environment only in the shells (cli/, server/)", () => {
    expect(environmentReadsBelowShells()).toEqual([]);
  });

  it("has no two folders that import each other", () => {
    const pairs = new Set(edges.map(([from, to]) => `${from}>${to}`));
    const ties = [...pairs].filter((pair) => pairs.has(pair.split(">").reverse().join(">")));
    expect(ties).toEqual([]);
  });
});
