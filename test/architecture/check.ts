import { extractFacts, type Dependency, type FileFacts } from "./extract.js";
import { LAYERS, matches, matchesAny, RULES, type Rule } from "./rules.js";
import { folderCircles } from "./folder-circles.js";

/** One broken rule. `where` is a file below src/ (or, for a circle, the folders in it); `detail` names what. */
export interface Violation {
  rule: string;
  where: string;
  detail: string;
  line?: number;
}

/** A known violation, reviewed by hand, that a change is under way to remove (baseline.json). */
export interface BaselineEntry {
  rule: string;
  where: string;
  detail: string;
  note: string;
}

export interface CheckResult {
  /** What was read of each file. */
  facts: FileFacts[];
  violations: Violation[];
  /** Violations not in the baseline: the check fails on them. */
  added: Violation[];
  /** Baseline entries that no longer occur: the check fails on them too, so the baseline only shrinks. */
  stale: BaselineEntry[];
}

export const keyOf = (v: { rule: string; where: string; detail: string }) => `${v.rule} | ${v.where} | ${v.detail}`;

/** Reads every source file under `root` and applies `rules`; a violation listed in `baseline` is known, not added. */
export function checkArchitecture(root: string, options: { rules?: Rule[]; layers?: typeof LAYERS; baseline?: BaselineEntry[] } = {}): CheckResult {
  const facts = extractFacts(root);
  const found = new Map<string, Violation>();
  for (const rule of options.rules ?? RULES) {
    for (const v of evaluate(rule, facts, options.layers ?? LAYERS)) if (!found.has(keyOf(v))) found.set(keyOf(v), v);
  }
  const violations = [...found.values()];
  const known = new Set((options.baseline ?? []).map(keyOf));
  return {
    facts,
    violations,
    added: violations.filter((v) => !known.has(keyOf(v))),
    stale: (options.baseline ?? []).filter((entry) => !found.has(keyOf(entry))),
  };
}

/** "ops/backup.ts" → "ops"; a file at the top ("errors.ts") is its own folder. */
export const folderOf = (file: string) => file.split("/")[0]!;

/** Dependencies on files of the tree (not packages), as [file, dependency, target file]. */
function internalEdges(facts: FileFacts[]): Array<[FileFacts, Dependency, string]> {
  return facts.flatMap((f) => f.dependencies.filter((d) => d.target && !d.target.includes(":")).map((d) => [f, d, d.target!] as [FileFacts, Dependency, string]));
}

function evaluate(rule: Rule, facts: FileFacts[], layers: typeof LAYERS): Violation[] {
  const layerOf = (file: string) => layers.findIndex((layer) => layer.members.includes(folderOf(file)));
  const out: Violation[] = [];
  const add = (where: string, detail: string, line?: number) => out.push({ rule: rule.id, where, detail, line });
  switch (rule.kind) {
    case "layer-known":
      for (const f of facts) if (layerOf(f.file) < 0) add(f.file, `folder ${folderOf(f.file)} is in no layer`);
      break;
    case "no-upward-import":
      for (const [f, d, to] of internalEdges(facts)) {
        if (layerOf(to) >= 0 && layerOf(f.file) >= 0 && layerOf(to) < layerOf(f.file)) add(f.file, `${d.kind} of ${to}`, d.line);
      }
      break;
    case "no-folder-circle":
      for (const circle of folderCircles(internalEdges(facts).map(([f, , to]) => ({ from: folderOf(f.file), to: folderOf(to), file: f.file })))) {
        add(circle.folders.join(" ↔ "), circle.shortest);
      }
      break;
    case "resolvable":
      for (const f of facts) {
        for (const d of f.dependencies) {
          if (d.specifier === undefined) add(f.file, `${d.kind} with a computed specifier`, d.line);
          else if (!d.target || d.target.startsWith("outside:")) add(f.file, `${d.kind} of ${d.specifier} (${d.target ? "outside src" : "unresolved"})`, d.line);
        }
      }
      break;
    case "packages-only-in":
      for (const f of facts) {
        if (matchesAny(rule.allowedIn, f.file)) continue;
        for (const d of f.dependencies) if (rule.packages.some((p) => d.target === `package:${p}`)) add(f.file, `${d.kind} of ${d.target!.slice("package:".length)}`, d.line);
      }
      break;
    case "contract-only":
      for (const [f, d, to] of internalEdges(facts)) {
        if (!matches(rule.owner, f.file) && !matchesAny(rule.allowedFrom ?? [], f.file) && matches(rule.owner, to) && !d.typeOnly && !rule.contract.includes(to)) add(f.file, `value ${d.kind} of ${to}`, d.line);
      }
      break;
    case "apart":
      for (const [f, d, to] of internalEdges(facts)) {
        const inside = matches(rule.folder, f.file);
        if (inside && !matches(rule.folder, to) && !(d.typeOnly && matchesAny(rule.typeOnlyAllowed, to))) add(f.file, `${d.typeOnly ? "type-only" : "value"} ${d.kind} of ${to}`, d.line);
        if (!inside && matches(rule.folder, to)) add(f.file, `${d.kind} of ${to}`, d.line);
      }
      break;
    case "types-only":
      for (const f of facts) {
        if (!rule.files.includes(f.file)) continue;
        for (const d of f.dependencies) if (!d.typeOnly) add(f.file, `value ${d.kind} of ${d.specifier}`, d.line);
      }
      break;
    case "sql-only-in": {
      const tables = tablesCreatedIn(facts.find((f) => f.file === rule.tablesFrom));
      if (tables.length === 0) {
        add(rule.tablesFrom, "no CREATE TABLE found: the rule would check nothing");
        break;
      }
      const statement = new RegExp(`\\b(?:from|into|update|join|table)\\s+(?:${tables.join("|")})\\b`, "gi");
      for (const f of facts) {
        if (matchesAny(rule.allowedIn, f.file)) continue;
        for (const s of f.strings) for (const m of s.text.matchAll(statement)) add(f.file, `SQL "${m[0].replace(/\s+/g, " ").toLowerCase()}"`, s.line);
      }
      break;
    }
    case "strings-only-in":
      for (const f of facts) {
        if (matchesAny(rule.allowedIn, f.file)) continue;
        for (const { name, pattern } of rule.patterns) {
          const at = f.strings.find((s) => new RegExp(pattern, "i").test(s.text));
          if (at) add(f.file, `names ${name}`, at.line);
        }
      }
      break;
    case "env-only-in":
      for (const f of facts) if (f.envReads.length && !matchesAny(rule.allowedIn, f.file)) add(f.file, "process.env", f.envReads[0]);
      break;
  }
  return out;
}

/** Table names from CREATE [VIRTUAL] TABLE [IF NOT EXISTS] in the string literals of the migrations file. */
export function tablesCreatedIn(migrations: FileFacts | undefined): string[] {
  const names = (migrations?.strings ?? []).flatMap((s) => [...s.text.matchAll(/create\s+(?:virtual\s+)?table\s+(?:if\s+not\s+exists\s+)?(\w+)/gi)].map((m) => m[1]!));
  return [...new Set(names)].sort();
}
