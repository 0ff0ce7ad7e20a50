import fs from "node:fs";
import path from "node:path";
import ts from "typescript";
import { describe, expect, it } from "vitest";
import { ROOT } from "../helpers/cli.js";
import { tempDir } from "../helpers/temp.js";

/**
 * The dashboard reads the admin API through the server's own answer types (src/server/api-types.ts), never through
 * a shape of its own: its copy had drifted (no lastSkipped, lastDrill, nextDrill; an archive's encryption taken for
 * a string). Read with the compiler itself, from the dashboard's entry and tsconfig.
 */
const API_TYPES = path.join(ROOT, "src", "server", "api-types.ts");
const UI = path.join(ROOT, "src", "ui");

/** A program over the dashboard's files (or `roots`) with the dashboard's compiler options. */
function program(roots: string[]): ts.Program {
  const config = ts.getParsedCommandLineOfConfigFile(path.join(UI, "tsconfig.json"), {}, { ...ts.sys, onUnRecoverableConfigFileDiagnostic: () => {} })!;
  return ts.createProgram(roots, config.options);
}

/** The property names of every object type the API's answers are made of, nested ones included, each with where it is. */
function apiShapes(checker: ts.TypeChecker, apiTypes: ts.SourceFile): Array<{ name: string; fields: Set<string> }> {
  const shapes: Array<{ name: string; fields: Set<string> }> = [];
  const seen = new Set<ts.Type>();
  // Breadth first, so that a type is named by its export (BackupRun) rather than where it is nested (BackupStatus.lastResult).
  const queue = checker.getExportsOfModule(checker.getSymbolAtLocation(apiTypes)!).map((exported) => ({
    type: checker.getDeclaredTypeOfSymbol(exported.flags & ts.SymbolFlags.Alias ? checker.getAliasedSymbol(exported) : exported),
    name: exported.name,
  }));
  for (let next = queue.shift(); next; next = queue.shift()) {
    const { type, name } = next;
    if (seen.has(type)) continue;
    seen.add(type);
    if (type.isUnion()) queue.push(...type.types.map((t) => ({ type: t, name })));
    else if (checker.isArrayType(type)) queue.push({ type: checker.getTypeArguments(type as ts.TypeReference)[0]!, name: `${name}[]` });
    else if (type.flags & ts.TypeFlags.Object || type.isIntersection()) {
      const properties = checker.getPropertiesOfType(type);
      shapes.push({ name, fields: new Set(properties.map((p) => p.name)) });
      queue.push(...properties.map((p) => ({ type: checker.getTypeOfSymbol(p), name: `${name}.${p.name}` })));
    }
  }
  return shapes;
}

/** Whether a type named at an `api<…>`/`upload<…>` call is imported, by that name, from src/server/api-types.ts. */
function namesAnApiType(checker: ts.TypeChecker, node: ts.TypeNode): boolean {
  if (!ts.isTypeReferenceNode(node)) return false;
  const declaration = checker.getSymbolAtLocation(node.typeName)?.declarations?.[0];
  if (!declaration || !ts.isImportSpecifier(declaration)) return false;
  const from = declaration.parent.parent.parent.moduleSpecifier as ts.StringLiteral;
  return path.resolve(path.dirname(declaration.getSourceFile().fileName), from.text).replace(/\.js$/, ".ts") === API_TYPES;
}

/**
 * What in `files` reads the API through its own shapes, as "file:line: why": an answer's type at `api<…>` or
 * `upload<…>` that is not imported from api-types.ts, and any interface or object type whose fields are those of
 * one of the API's object types, or three or more of them (a hand copy of it, or of a part of it; two common words
 * such as a message and its hint are not a copy).
 */
function handCopies(roots: string[], files: (file: string) => boolean): string[] {
  const built = program([...roots, API_TYPES]);
  const checker = built.getTypeChecker();
  const shapes = apiShapes(checker, built.getSourceFile(API_TYPES)!);
  const found: string[] = [];
  for (const source of built.getSourceFiles().filter((s) => files(s.fileName))) {
    const where = (node: ts.Node) => `${path.relative(ROOT, source.fileName)}:${source.getLineAndCharacterOfPosition(node.getStart()).line + 1}`;
    const visit = (node: ts.Node) => {
      if (ts.isCallExpression(node) && ts.isIdentifier(node.expression) && ["api", "upload"].includes(node.expression.text)) {
        for (const argument of node.typeArguments ?? []) {
          if (!namesAnApiType(checker, argument)) found.push(`${where(node)}: ${node.expression.text}<${argument.getText()}> is not an answer type of src/server/api-types.ts`);
        }
      }
      if (ts.isInterfaceDeclaration(node) || ts.isTypeLiteralNode(node)) {
        const fields = node.members.filter(ts.isPropertySignature).map((m) => m.name.getText());
        const copies = (shape: { fields: Set<string> }) => fields.every((f) => shape.fields.has(f)) && (fields.length >= 3 || fields.length === shape.fields.size);
        const copied = fields.length >= 2 && shapes.find(copies);
        if (copied) found.push(`${where(node)}: { ${fields.join(", ")} } copies the fields of ${copied.name} (import it from src/server/api-types.ts)`);
      }
      ts.forEachChild(node, visit);
    };
    visit(source);
  }
  return found;
}

describe("the dashboard's view of the admin API", () => {
  it("has no hand-written copy of an answer type: every answer is read through src/server/api-types.ts", () => {
    const uiFiles = (file: string) => file.startsWith(UI + path.sep);
    expect(handCopies([path.join(UI, "main.tsx")], uiFiles)).toEqual([]);
    // The whole dashboard was read, and it reaches api-types.ts through its own imports.
    const built = program([path.join(UI, "main.tsx")]);
    expect(built.getSourceFiles().filter((s) => uiFiles(s.fileName)).length).toBe(fs.readdirSync(UI, { recursive: true, encoding: "utf8" }).filter((f) => /\.tsx?$/.test(f)).length);
    expect(built.getSourceFile(API_TYPES)).toBeDefined();
  });

  it("catches a page that reads an answer through a shape of its own", () => {
    // A page written in a temporary directory, importing the dashboard's api() and the API's types by absolute path.
    const js = (file: string) => file.replace(/\.ts$/, ".js");
    const text = [
      `import type { BackupStatus as Status, DrillRecord } from "${js(API_TYPES)}";`,
      `import { api } from "${js(path.join(UI, "api.ts"))}";`,
      "interface Run { startedAt: string; finishedAt: string; ok: boolean }",
      "type Mine = { removed: string; snippets: number };",
      "type Words = (provider: string) => { message: string; hint: string };",
      'export const inline = () => api<{ uploadLimitBytes: number }>("GET", "/api/restore/limits");',
      'export const local = () => api<Mine>("DELETE", "/api/libraries?id=x");',
      'export const fine = () => api<Status>("GET", "/api/backup/status");',
      "export function Drill(props: { last: DrillRecord | null; next: string | null }) { return props; }",
      "export type Used = [Run, Words];",
    ].join("\n");
    const planted = path.join(tempDir(), "planted-copy.ts");
    fs.writeFileSync(planted, text);
    const found = handCopies([planted], (file) => file === planted).map((f) => f.slice(f.indexOf(": ") + 2));
    expect(found).toEqual([
      "{ startedAt, finishedAt, ok } copies the fields of BackupRun (import it from src/server/api-types.ts)",
      "{ removed, snippets } copies the fields of LibraryRemoved (import it from src/server/api-types.ts)",
      "api<{ uploadLimitBytes: number }> is not an answer type of src/server/api-types.ts",
      "api<Mine> is not an answer type of src/server/api-types.ts",
    ]);
  });
});
