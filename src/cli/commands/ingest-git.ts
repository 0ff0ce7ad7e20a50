import { resolveDataDir } from "../../config/data-volume.js";
import { ingestGitRepository } from "../../ops/ingest-git.js";
import { openVolume } from "../../ops/open-volume.js";
import { interruptSignal } from "../signals.js";

export async function run(argv: { url: string; dataDir?: string; branch?: string; skipVersionFiltering: boolean; allowHttpHost: string[]; json: boolean }): Promise<number> {
  const volume = openVolume(resolveDataDir(argv.dataDir));
  const interrupt = interruptSignal();
  try {
    const result = await ingestGitRepository({
      volume,
      repositoryUrl: argv.url,
      branch: argv.branch,
      // Never a flag: command lines show in `ps` and shell history.
      token: process.env.LDS_GIT_TOKEN || undefined,
      skipVersionFiltering: argv.skipVersionFiltering,
      allowHttpHosts: argv.allowHttpHost,
      signal: interrupt.signal,
    });
    if (argv.json) process.stdout.write(JSON.stringify(result) + "\n");
    else if (result.unchanged) process.stdout.write(`${result.libraryId}: ${result.branch} is still at ${result.commit.slice(0, 12)}; nothing to do.\n`);
    else process.stdout.write(`${result.libraryId}: indexed ${result.snippets} snippets from ${result.branch} at ${result.commit.slice(0, 12)}.\n`);
    return 0;
  } finally {
    interrupt.dispose();
    volume.close();
  }
}
