import fs from "node:fs";
import path from "node:path";
import type { Snippet } from "./snippet.js";

/** Source files `generateDocs` reads, by language. Tests and declaration-only files are left out. */
const LANGUAGES: Record<string, string> = { ".ts": "typescript", ".tsx": "typescript", ".mts": "typescript", ".js": "javascript", ".mjs": "javascript", ".jsx": "javascript", ".py": "python", ".go": "go" };
const TEST_FILE = /(\.(test|spec)\.[cm]?[jt]sx?$)|(_test\.go$)|(^test_.*\.py$)|(\.d\.ts$)/;
const EXCLUDED_DIRS = /^(node_modules|vendor|third_party|\.git|dist|build|test|tests|__tests__|testdata|examples?)$/i;
const MAX_SOURCE_BYTES = 512 * 1024;

/**
 * Documentation generated from the code itself (the spec's `generateDocs`): every exported function, class,
 * interface or type with a doc comment becomes a code snippet: its signature, described by its comment.
 */
export function collectSourceSnippets(root: string): Snippet[] {
  const snippets: Snippet[] = [];
  const walk = (rel: string) => {
    for (const entry of fs.readdirSync(path.join(root, rel), { withFileTypes: true })) {
      const child = rel ? `${rel}/${entry.name}` : entry.name;
      if (entry.isDirectory() && !EXCLUDED_DIRS.test(entry.name)) walk(child);
      else if (entry.isFile() && LANGUAGES[path.extname(entry.name)] && !TEST_FILE.test(entry.name)) {
        const full = path.join(root, child);
        if (fs.statSync(full).size <= MAX_SOURCE_BYTES) snippets.push(...documentedDeclarations(fs.readFileSync(full, "utf8"), child));
      }
    }
  };
  walk("");
  return snippets;
}

export function documentedDeclarations(source: string, sourcePath: string): Snippet[] {
  const language = LANGUAGES[path.extname(sourcePath)] ?? null;
  const found = language === "python" ? python(source) : language === "go" ? go(source) : javascript(source);
  return found.map(({ name, doc, signature }) => ({
    kind: "code" as const,
    title: name,
    description: doc,
    language,
    content: signature,
    sourcePath,
    anchor: name.toLowerCase(),
  }));
}

type Found = { name: string; doc: string; signature: string };

/** `/** … *\/` right before `export function|class|interface|type|const`. */
function javascript(source: string): Found[] {
  const out: Found[] = [];
  const pattern =
    /\/\*\*([\s\S]*?)\*\/\s*\n\s*(export\s+(?:default\s+)?(?:declare\s+)?(?:async\s+)?(?:function\*?|class|interface|type|const|abstract\s+class)\s+([A-Za-z_$][\w$]*)[^{;=]*(?:=\s*(?:async\s*)?\([^)]*\)[^={;]*=>)?)/g;
  for (const m of source.matchAll(pattern)) {
    const doc = m[1]!
      .split("\n")
      .map((l) => l.replace(/^\s*\*\s?/, ""))
      .filter((l) => !l.startsWith("@"))
      .join(" ")
      .replace(/\s+/g, " ")
      .trim();
    if (doc) out.push({ name: m[3]!, doc, signature: m[2]!.replace(/\s+/g, " ").trim() });
  }
  return out;
}

/** Top-level `def`/`class` without a leading underscore, with a docstring. */
function python(source: string): Found[] {
  const out: Found[] = [];
  const pattern = /^(?:async\s+)?(def|class)\s+([A-Za-z]\w*)([^\n]*?:)\s*\n\s+(?:"""([\s\S]*?)"""|'''([\s\S]*?)''')/gm;
  for (const m of source.matchAll(pattern)) {
    const doc = (m[4] ?? m[5] ?? "").replace(/\s+/g, " ").trim();
    if (doc) out.push({ name: m[2]!, doc, signature: `${m[1]} ${m[2]}${m[3]}`.trim() });
  }
  return out;
}

/** `// Name …` comment lines right above an exported `func` or `type`. */
function go(source: string): Found[] {
  const out: Found[] = [];
  const pattern = /((?:^\/\/[^\n]*\n)+)(func\s+(?:\([^)]*\)\s*)?([A-Z]\w*)[^{\n]*|type\s+([A-Z]\w*)\s+[^{\n]*)/gm;
  for (const m of source.matchAll(pattern)) {
    const doc = m[1]!
      .split("\n")
      .map((l) => l.replace(/^\/\/\s?/, ""))
      .join(" ")
      .replace(/\s+/g, " ")
      .trim();
    out.push({ name: (m[3] ?? m[4])!, doc, signature: m[2]!.trim() });
  }
  return out;
}
