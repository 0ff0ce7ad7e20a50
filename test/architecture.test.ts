import fs from "node:fs";
import path from "node:path";
import ts from "typescript";
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
 * Imports of a dashboard file that reach beyond src/ui, other than `import type { … } from ".../server/api-types.js"`
 * (the admin API's answers; esbuild drops type-only imports, so nothing of the server enters the browser bundle),
 * as "file:line: statement". Read with the compiler's parser: every import and export form, dynamic import() included.
 */
function uiImportsBeyondApiTypes(file: string, text: string): string[] {
  const ui = path.join(ROOT, "src", "ui");
  const apiTypes = path.join(ROOT, "src", "server", "api-types.ts");
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true);
  const found: string[] = [];
  const check = (node: ts.Node, specifier: ts.Expression | undefined, typeOnly: boolean) => {
    if (!specifier || !ts.isStringLiteralLike(specifier) || !specifier.text.startsWith(".")) return;
    const target = path.resolve(path.dirname(file), specifier.text).replace(/\.js$/, ".ts");
    if (target.startsWith(ui + path.sep)) return;
    const line = source.getLineAndCharacterOfPosition(node.getStart(source)).line;
    if (!(typeOnly && target === apiTypes)) found.push(`${path.relative(ROOT, file)}:${line + 1}: ${text.split("\n")[line]!.trim()}`);
  };
  const visit = (node: ts.Node) => {
    if (ts.isImportDeclaration(node)) check(node, node.moduleSpecifier, Boolean(node.importClause?.isTypeOnly));
    else if (ts.isExportDeclaration(node)) check(node, node.moduleSpecifier, false);
    else if (ts.isImportEqualsDeclaration(node) && ts.isExternalModuleReference(node.moduleReference)) check(node, node.moduleReference.expression, false);
    else if (ts.isCallExpression(node) && node.expression.kind === ts.SyntaxKind.ImportKeyword) check(node, node.arguments[0], false);
    ts.forEachChild(node, visit);
  };
  visit(source);
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

  it("keeps the dashboard (src/ui, compiled for the browser) apart from the server's code: only `import type` of server/api-types.ts", () => {
    expect(edges.filter(([from, to]) => to === "ui" && from !== "ui").map(([, to, file]) => `${file} imports ${to}`)).toEqual([]);
    const ui = path.join(ROOT, "src", "ui");
    const files = fs.readdirSync(ui, { recursive: true, encoding: "utf8" }).filter((f) => /\.tsx?$/.test(f)).map((f) => path.join(ui, f));
    expect(files.length).toBeGreaterThan(10);
    expect(files.flatMap((file) => uiImportsBeyondApiTypes(file, fs.readFileSync(file, "utf8")))).toEqual([]);
    // Each form of reaching the server's code is caught (the rule can fail).
    const planted = [
      'import { overview } from "../../ops/overview.js";',
      "import { type Overview } from '../../server/api-types.js';",
      'import * as types from "../../server/api-types.js";',
      'export type { Overview } from "../../ops/overview.js";',
      'export * from "../../server/api-types.js";',
      'import "../../server/app.js";',
      'const lazy = () => import("../../server/api-types.js");',
      'import type { Store } from "../../store/store.js";',
    ];
    const caught = uiImportsBeyondApiTypes(path.join(ui, "pages", "planted.tsx"), planted.join("\n"));
    expect(caught.map((c) => c.slice(c.indexOf(": ") + 2))).toEqual(planted);
    expect(uiImportsBeyondApiTypes(path.join(ui, "pages", "fine.tsx"), 'import type { Overview } from "../../server/api-types.js";\nimport { api } from "../api.js";\nimport { useState } from "preact/hooks";')).toEqual([]);
  });

  it("has no two folders that import each other", () => {
    const pairs = new Set(edges.map(([from, to]) => `${from}>${to}`));
    const ties = [...pairs].filter((pair) => pairs.has(pair.split(">").reverse().join(">")));
    expect(ties).toEqual([]);
  });
});
