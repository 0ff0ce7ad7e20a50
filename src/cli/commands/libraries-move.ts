import os from "node:os";
import { gitPolicyFromEnv } from "../../config/git-settings.js";
import { moveLibrary } from "../../ops/move-library.js";
import { withRecords } from "../with-volume.js";

/** `lds libraries move ID --to URL [--branch B]`: re-point a library at a new source, recorded in the audit log. */
export async function run(argv: { id: string; to: string; branch?: string; allowHttpHost: string[]; dataDir?: string; json: boolean }): Promise<number> {
  const policy = gitPolicyFromEnv(process.env, argv.allowHttpHost);
  return withRecords(argv.dataDir, async (volume) => {
    const moved = await moveLibrary(volume, policy, { libraryId: argv.id, to: argv.to, branch: argv.branch, actor: `cli:${os.userInfo().username}` });
    if (argv.json) process.stdout.write(JSON.stringify({ libraryId: argv.id, ...moved }) + "\n");
    else {
      process.stdout.write(`${argv.id} now follows ${moved.to} (was ${moved.from || "none"}); recorded in the audit log.\n`);
      process.stdout.write("It keeps serving its current snippets until the running server has indexed the new source (`lds libraries list` shows the state).\n");
    }
    return 0;
  });
}
