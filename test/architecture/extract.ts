import fs from "node:fs";
import path from "node:path";
import ts from "typescript";

/**
 * What the architecture check knows about one source file, read from its syntax tree (never from its text, so a
 * comment or a string that looks like an import is not one) and resolved the way the compiler resolves it.
 */
export interface FileFacts {
  /** Path below the source root, with "/" (e.g. "ops/backup.ts"). */
  file: string;
  dependencies: Dependency[];
  /** Lines that read or write `process.env`. */
  envReads: number[];
  /** Every string literal and template text in the file (not comments), with its line. */
  strings: Array<{ text: string; line: number }>;
}

export type DependencyKind = "import" | "export" | "import-equals" | "dynamic-import" | "import-type" | "require" | "module-url" | "worker";

export interface Dependency {
  kind: DependencyKind;
  /** The specifier as written; undefined for a dynamic import whose argument is not a literal. */
  specifier: string | undefined;
  /** "ops/backup.ts" for a file below the root, "package:name" for a package or builtin, undefined if unresolved. */
  target: string | undefined;
  /** Written as type-only (`import type`, every named binding `type`, `typeof import()`): erased at compile time. */
  typeOnly: boolean;
  line: number;
}

const SOURCE = /\.(ts|tsx|mts|cts)$/;
const MODULE_FILE = /\.(js|mjs|cjs|ts|mts|cts|tsx|jsx)$/;

/** Facts for every .ts/.tsx file below `root` (declaration files skipped), sorted by path. */
export function extractFacts(sourceRoot: string): FileFacts[] {
  const root = path.resolve(sourceRoot);
  const resolver = createResolver(root);
  return listSources(root).map((full) => factsOf(root, full, resolver));
}

function listSources(dir: string): string[] {
  const out: string[] = [];
  for (const entry of fs.readdirSync(dir, { withFileTypes: true }).sort((a, b) => a.name.localeCompare(b.name))) {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) out.push(...listSources(full));
    else if (SOURCE.test(entry.name) && !entry.name.endsWith(".d.ts")) out.push(full);
  }
  return out;
}

type Resolve = ((specifier: string, containingFile: string) => string | undefined) & { mapsPaths: boolean };

/**
 * Resolution with the compiler options of the nearest tsconfig.json at or below the root's parent (src/ui has its
 * own, for the browser), so "./x.js" finds x.ts or x.tsx exactly as tsc does; a tree without one gets NodeNext.
 */
function createResolver(root: string): (file: string) => Resolve {
  const top = path.dirname(root);
  const byConfig = new Map<string, Resolve>();
  const configFor = (file: string): string | undefined => {
    for (let dir = path.dirname(file); dir.startsWith(top); dir = path.dirname(dir)) {
      const candidate = path.join(dir, "tsconfig.json");
      if (fs.existsSync(candidate)) return candidate;
      if (dir === top) break;
    }
    return undefined;
  };
  return (file) => {
    const config = configFor(file) ?? "";
    let resolve = byConfig.get(config);
    if (!resolve) {
      const options = config
        ? ts.parseJsonConfigFileContent(ts.readConfigFile(config, ts.sys.readFile).config, ts.sys, path.dirname(config)).options
        : { module: ts.ModuleKind.NodeNext, moduleResolution: ts.ModuleResolutionKind.NodeNext };
      const cache = ts.createModuleResolutionCache(top, (name) => name, options);
      resolve = Object.assign((specifier: string, containing: string) => ts.resolveModuleName(specifier, containing, options, ts.sys, cache).resolvedModule?.resolvedFileName, { mapsPaths: !!options.paths });
      byConfig.set(config, resolve);
    }
    return resolve;
  };
}

function factsOf(root: string, full: string, resolverFor: (file: string) => Resolve): FileFacts {
  const text = fs.readFileSync(full, "utf8");
  const source = ts.createSourceFile(full, text, { languageVersion: ts.ScriptTarget.Latest, jsDocParsingMode: ts.JSDocParsingMode.ParseNone }, false, full.endsWith("x") ? ts.ScriptKind.TSX : ts.ScriptKind.TS);
  const resolve = resolverFor(full);
  const facts: FileFacts = { file: rel(root, full), dependencies: [], envReads: [], strings: [] };
  const lineOf = (node: ts.Node) => source.getLineAndCharacterOfPosition(node.getStart(source)).line + 1;

  const target = (specifier: string): string | undefined => {
    const relative = specifier.startsWith(".") || path.isAbsolute(specifier);
    // A bare name is a package unless the tsconfig maps names to paths (then it may be a file of ours).
    if (!relative && !resolve.mapsPaths) return `package:${packageName(specifier)}`;
    let resolved = resolve(specifier, full);
    // An asset the bundler takes (src/ui's styles.css) is a file of ours too, though no module.
    if (!resolved && relative && fs.existsSync(path.resolve(path.dirname(full), specifier))) resolved = path.resolve(path.dirname(full), specifier);
    if (resolved && !resolved.includes(`${path.sep}node_modules${path.sep}`) && path.resolve(resolved).startsWith(root + path.sep)) return rel(root, resolved);
    if (relative) return resolved ? `outside:${path.relative(root, resolved)}` : undefined;
    return `package:${packageName(specifier)}`;
  };
  const add = (kind: DependencyKind, node: ts.Node, specifierNode: ts.Expression | undefined, typeOnly: boolean) => {
    const specifier = specifierNode && ts.isStringLiteralLike(specifierNode) ? specifierNode.text : undefined;
    facts.dependencies.push({ kind, specifier, target: specifier === undefined ? undefined : target(specifier), typeOnly, line: lineOf(node) });
  };

  const visit = (node: ts.Node): void => {
    if (ts.isImportDeclaration(node)) add("import", node, node.moduleSpecifier, importIsTypeOnly(node.importClause));
    else if (ts.isExportDeclaration(node) && node.moduleSpecifier) add("export", node, node.moduleSpecifier, node.isTypeOnly || exportIsTypeOnly(node.exportClause));
    else if (ts.isImportEqualsDeclaration(node) && ts.isExternalModuleReference(node.moduleReference)) add("import-equals", node, node.moduleReference.expression, node.isTypeOnly);
    else if (ts.isImportTypeNode(node) && ts.isLiteralTypeNode(node.argument)) add("import-type", node, node.argument.literal as ts.Expression, true);
    else if (ts.isCallExpression(node)) visitCall(node);
    else if (ts.isNewExpression(node)) visitNew(node);
    else if (isProcessEnv(node)) facts.envReads.push(lineOf(node));
    if (ts.isStringLiteralLike(node)) facts.strings.push({ text: node.text, line: lineOf(node) });
    else if (ts.isTemplateExpression(node)) facts.strings.push({ text: [node.head.text, ...node.templateSpans.map((s) => s.literal.text)].join("${}"), line: lineOf(node) });
    ts.forEachChild(node, visit);
  };
  const visitCall = (call: ts.CallExpression) => {
    const [first] = call.arguments;
    if (call.expression.kind === ts.SyntaxKind.ImportKeyword) add("dynamic-import", call, first, false);
    else if (ts.isIdentifier(call.expression) && call.expression.text === "require" && first) add("require", call, first, false);
    else if (isImportMetaResolve(call.expression)) add("module-url", call, first, false);
    else moduleUrl(call, call.arguments);
  };
  const visitNew = (expr: ts.NewExpression) => {
    const [first] = expr.arguments ?? [];
    // new Worker("./entry.js"): a path literal (a URL built from import.meta.url is caught as its own expression).
    if (ts.isIdentifier(expr.expression) && expr.expression.text === "Worker" && first && ts.isStringLiteralLike(first)) add("worker", expr, first, false);
    else moduleUrl(expr, expr.arguments ?? []);
  };
  /** new URL("./x.js", import.meta.url), builtModule(import.meta.url, "./x.js"): a module named relative to this one. */
  const moduleUrl = (node: ts.Node, args: readonly ts.Expression[]) => {
    if (!args.some(isImportMetaUrl)) return;
    const literal = args.find((a) => ts.isStringLiteralLike(a) && MODULE_FILE.test(a.text));
    if (literal) add("module-url", node, literal, false);
  };

  visit(source);
  return facts;
}

function importIsTypeOnly(clause: ts.ImportClause | undefined): boolean {
  if (!clause) return false; // import "x": run for its effects
  if (clause.isTypeOnly) return true;
  if (clause.name) return false;
  const bindings = clause.namedBindings;
  return !!bindings && ts.isNamedImports(bindings) && bindings.elements.length > 0 && bindings.elements.every((e) => e.isTypeOnly);
}

function exportIsTypeOnly(clause: ts.NamedExportBindings | undefined): boolean {
  return !!clause && ts.isNamedExports(clause) && clause.elements.length > 0 && clause.elements.every((e) => e.isTypeOnly);
}

const isImportMetaUrl = (node: ts.Node) => ts.isPropertyAccessExpression(node) && ts.isMetaProperty(node.expression) && node.expression.keywordToken === ts.SyntaxKind.ImportKeyword && node.name.text === "url";
const isImportMetaResolve = (node: ts.Node) => ts.isPropertyAccessExpression(node) && ts.isMetaProperty(node.expression) && node.name.text === "resolve";

/** process.env, process["env"], globalThis.process.env, and `const { env } = process`. */
function isProcessEnv(node: ts.Node): boolean {
  const isProcess = (e: ts.Expression) =>
    (ts.isIdentifier(e) && e.text === "process") || (ts.isPropertyAccessExpression(e) && e.name.text === "process" && ts.isIdentifier(e.expression) && e.expression.text === "globalThis");
  if (ts.isPropertyAccessExpression(node)) return node.name.text === "env" && isProcess(node.expression);
  if (ts.isElementAccessExpression(node)) return ts.isStringLiteralLike(node.argumentExpression) && node.argumentExpression.text === "env" && isProcess(node.expression);
  if (ts.isVariableDeclaration(node) && node.initializer && ts.isObjectBindingPattern(node.name) && isProcess(node.initializer)) {
    return node.name.elements.some((e) => ((e.propertyName ?? e.name) as ts.Identifier).text === "env");
  }
  return false;
}

/** "node:fs" → "node:fs", "fs/promises" → "fs", "@aws-sdk/client-s3/x" → "@aws-sdk/client-s3". */
export function packageName(specifier: string): string {
  const parts = specifier.split("/");
  return specifier.startsWith("@") ? parts.slice(0, 2).join("/") : parts[0]!;
}

const rel = (root: string, file: string) => path.relative(root, file).split(path.sep).join("/");
