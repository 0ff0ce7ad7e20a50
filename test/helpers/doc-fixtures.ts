import fs from "node:fs";
import path from "node:path";
import { ROOT } from "./cli.js";

/** The documentation fixtures under fixtures/docs/<name> as a map of relative paths to contents (for a test repo). */
export function fixtureDocs(name: string): Record<string, string> {
  const base = path.join(ROOT, "fixtures", "docs", name);
  const files: Record<string, string> = {};
  const walk = (dir: string) => {
    for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
      const full = path.join(dir, entry.name);
      if (entry.isDirectory()) walk(full);
      else files[path.relative(base, full)] = fs.readFileSync(full, "utf8");
    }
  };
  walk(base);
  return files;
}
