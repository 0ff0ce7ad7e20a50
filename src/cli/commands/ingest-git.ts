import { gitPolicyFromEnv } from "../../config/git-settings.js";
import { ingestGitRepository } from "../../ops/ingest-git.js";
import { resolveIngestTarget } from "../../ops/ingest-target.js";
import { interruptSignal } from "../signals.js";
import { withVolume } from "../with-volume.js";

interface IngestArgs {
  url: string;
  dataDir?: string;
  branch?: string;
  tag?: string;
  versionName?: string;
  generateDocs: boolean;
  skipVersionFiltering: boolean;
  allowHttpHost: string[];
  json: boolean;
}

export async function run(argv: IngestArgs): Promise<number> {
  // The same settings as the server (LDS_GIT_*), plus any --allow-http-host.
  const policy = gitPolicyFromEnv(process.env, argv.allowHttpHost);
  return withVolume(
    argv.dataDir,
    async (volume) => {
      const interrupt = interruptSignal();
      try {
        const target = await resolveIngestTarget(volume, argv.url, policy, argv);
        const result = await ingestGitRepository({
          volume,
          repositoryUrl: argv.url,
          ...target,
          // Never a flag: command lines show in `ps` and shell history.
          token: process.env.LDS_GIT_TOKEN || undefined,
          skipVersionFiltering: argv.skipVersionFiltering,
          generateDocs: argv.generateDocs,
          ...policy,
          signal: interrupt.signal,
        });
        const name = `${result.libraryId}${target.version ? `/${target.version}` : ""}`;
        if (argv.json) process.stdout.write(JSON.stringify(result) + "\n");
        else if (result.unchanged) process.stdout.write(`${name}: ${result.branch} is still at ${result.commit.slice(0, 12)}; nothing to do.\n`);
        else process.stdout.write(`${name}: indexed ${result.snippets} snippets from ${result.branch} at ${result.commit.slice(0, 12)}.\n`);
        return 0;
      } finally {
        interrupt.dispose();
      }
    },
    // Writes only: on PostgreSQL no search files are opened; the replicas follow the published batch by themselves.
    { vectors: true, command: "lds ingest git", searchFor: "writes" },
  );
}
