import path from "node:path";
import { describe, expect, it } from "vitest";
import baselineFile from "./architecture/baseline.json" with { type: "json" };
import { checkArchitecture, keyOf, tablesCreatedIn, type BaselineEntry, type CheckResult } from "./architecture/check.js";
import { RULES } from "./architecture/rules.js";
import { ROOT } from "./helpers/cli.js";

/**
 * The architecture of src/ (docs/architecture.md), checked on the compiler's own reading of every file: the rules
 * and layers are data in test/architecture/rules.ts, known violations in test/architecture/baseline.json (it only
 * shrinks), and test/architecture/checker.test.ts proves the check on planted trees.
 */
const SRC = path.join(ROOT, "src");
const baseline: BaselineEntry[] = baselineFile.entries;
let result: CheckResult | undefined;
const checked = () => (result ??= checkArchitecture(SRC, { baseline }));
const show = (v: { rule: string; where: string; detail: string; line?: number }) => `${keyOf(v)}${v.line ? ` (line ${v.line})` : ""}`;

describe("the architecture of src/", () => {
  for (const rule of RULES) {
    it(`${rule.id}: ${rule.reason}`, () => {
      // A new violation: fix it (the rule says why), or, reviewed, add it to baseline.json with a note.
      expect(
        checked()
          .added.filter((v) => v.rule === rule.id)
          .map(show),
      ).toEqual([]);
      // A known violation that is gone: delete its entry from baseline.json, so that it cannot come back.
      expect(
        checked()
          .stale.filter((v) => v.rule === rule.id)
          .map(keyOf),
      ).toEqual([]);
    });
  }

  it("has a reviewed note on every baseline entry, for a rule that exists", () => {
    const ids = new Set(RULES.map((r) => r.id));
    expect(baseline.filter((e) => !ids.has(e.rule) || e.note.trim().length < 20).map(keyOf)).toEqual([]);
    expect(new Set(baseline.map(keyOf)).size).toBe(baseline.length);
  });

  it("reads the worker entries, lazy imports and lds.db's tables it checks", () => {
    const facts = checked().facts;
    const deps = (file: string) => facts.find((f) => f.file === file)!.dependencies.map((d) => `${d.kind} ${d.target}`);
    expect(deps("ops/heavy-work.ts")).toContain("module-url ops/heavy-work-entry.ts");
    expect(deps("index/sqlite/knn-worker.ts")).toContain("module-url index/sqlite/knn-worker-entry.ts");
    expect(deps("cli/main.ts")).toContain("dynamic-import cli/commands/serve.ts");
    expect(deps("ops/backup.ts")).toContain("dynamic-import archive/age-seal.ts");
    expect(tablesCreatedIn(facts.find((f) => f.file === "engine/sqlite/migrations.ts"))).toEqual(expect.arrayContaining(["libraries", "snippets", "snippets_fts", "jobs", "secrets", "audit_log"]));
  });
});
