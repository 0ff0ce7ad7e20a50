// Each project's docs folder becomes a git repository on a local git server (bench/lib/git-http-server.js) and is
// ingested the way a user would: `lds ingest git URL` of the built CLI, into one data folder, one library per project.
import path from "node:path";
import { startGitHttpServer } from "../lib/git-http-server.js";
import { measureAsync } from "../lib/measure.js";
import { CORPUS, docsTree } from "./corpus.js";

/** The owner of the benchmark's repositories: library ids are /quality/<project>. */
export const OWNER = "quality";

/**
 * Ingest every project of the corpus into `dataDir` (which must be empty or absent).
 * @param {string} root the repository's root (bin/lds.js, node_modules)
 * @param {string} dataDir
 * @returns {Promise<Array<{ project: string, libraryId: string, files: string[], snippets: number, seconds: number, rssMiB: number }>>}
 */
export async function ingestCorpus(root, dataDir) {
  const git = await startGitHttpServer("unused");
  try {
    const host = new URL(git.base).host;
    const libraries = [];
    for (const project of Object.keys(CORPUS)) {
      const tree = docsTree(root, project);
      const repo = await git.createRepo("public", OWNER, project, tree);
      // Async: the git server answers from this very process.
      const run = await measureAsync(["node", path.join(root, "bin/lds.js"), "ingest", "git", repo.url, "--data-dir", dataDir, "--allow-http-host", host, "--json"]);
      const result = JSON.parse(run.stdout);
      libraries.push({ project, libraryId: result.libraryId, files: Object.keys(tree), snippets: result.snippets, seconds: run.seconds, rssMiB: run.rssMiB });
    }
    return libraries;
  } finally {
    await git.close();
  }
}
