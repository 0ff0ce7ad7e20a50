import fs from "node:fs";
import path from "node:path";

export interface CollectOptions {
  /** Keep version-specific pages (versioned_docs/, docs/v1/, …) that are filtered out by default. */
  skipVersionFiltering?: boolean;
}

/** Files that become documentation, in any letter case. */
const DOC_EXTENSIONS = new Set([".md", ".mdx", ".markdown", ".rst", ".txt", ".ipynb"]);
/** Folders never indexed: dependencies, vendored code, translations, archives. */
const EXCLUDED_DIRS = /^(node_modules|vendor|third_party|\.git|\.github|i18n|translations?|locales?|archived?|legacy|deprecated|dist|build)$/i;
/** Files never indexed: change logs, licences, codes of conduct. */
const EXCLUDED_FILES = /^(changelog|changes|history|license|licence|copying|notice|code_of_conduct|security|contributing)(\.[a-z]+)?$/i;
/** Version-specific documentation, filtered out unless skipVersionFiltering. */
const VERSIONED = /(^|\/)(versioned_docs|versioned_sidebars)(\/|$)|(^|\/)v\d+(\.\d+)*(\/|$)/i;

/** The repository's own choice of what to index: lds.json, or context7.json for repositories set up for that. */
interface RepoConfig {
  folders?: string[];
  excludeFolders?: string[];
  excludeFiles?: string[];
}

/** Relative paths of the documentation files to index, sorted. */
export function collectDocuments(root: string, options: CollectOptions = {}): string[] {
  const config = readRepoConfig(root);
  const roots = config.folders?.length ? config.folders : ["."];
  const excludedFolders = new Set((config.excludeFolders ?? []).map((f) => path.posix.normalize(f).replace(/\/$/, "")));
  const excludedFiles = new Set(config.excludeFiles ?? []);
  const found = new Set<string>();

  const walk = (rel: string) => {
    const full = path.join(root, rel);
    if (!fs.existsSync(full)) return;
    for (const entry of fs.readdirSync(full, { withFileTypes: true })) {
      const child = rel === "." ? entry.name : `${rel}/${entry.name}`;
      if (entry.isSymbolicLink()) continue; // a link may point outside the repository
      if (entry.isDirectory()) {
        if (EXCLUDED_DIRS.test(entry.name) || excludedFolders.has(child)) continue;
        walk(child);
      } else if (entry.isFile()) {
        if (!DOC_EXTENSIONS.has(path.extname(entry.name).toLowerCase())) continue;
        if (EXCLUDED_FILES.test(entry.name) || excludedFiles.has(entry.name) || excludedFiles.has(child)) continue;
        if (!options.skipVersionFiltering && VERSIONED.test(child)) continue;
        found.add(child);
      }
    }
  };
  for (const folder of roots) walk(path.posix.normalize(folder).replace(/^\/+|\/$/g, "") || ".");
  return [...found].sort();
}

function readRepoConfig(root: string): RepoConfig {
  for (const name of ["lds.json", "context7.json"]) {
    const file = path.join(root, name);
    if (!fs.existsSync(file)) continue;
    try {
      const parsed = JSON.parse(fs.readFileSync(file, "utf8")) as RepoConfig;
      const strings = (v: unknown) => (Array.isArray(v) ? v.filter((x): x is string => typeof x === "string" && !x.includes("..")) : undefined);
      return { folders: strings(parsed.folders), excludeFolders: strings(parsed.excludeFolders), excludeFiles: strings(parsed.excludeFiles) };
    } catch {
      return {};
    }
  }
  return {};
}
