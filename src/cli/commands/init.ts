import { createFirstKey } from "../../ops/first-key.js";
import type { Plan } from "../../store/records.js";
import { commandActor } from "../cli-actor.js";
import { withRecords } from "../with-volume.js";

/** `lds init --email EMAIL [--team NAME] [--plan P]`: the first team, its owner and an API key, shown once. */
export async function run(argv: { email: string; team: string; plan: Plan; dataDir?: string; json: boolean }): Promise<number> {
  return withRecords(argv.dataDir, async ({ store }) => {
    const made = await createFirstKey(store, commandActor(), { team: argv.team, email: argv.email, plan: argv.plan });
    if (argv.json) {
      process.stdout.write(JSON.stringify(made) + "\n");
      return 0;
    }
    const base = "http://127.0.0.1:3000";
    process.stdout.write(
      [
        `Created team ${made.team} (${made.plan} plan) with owner ${made.email}, and this API key:`,
        "",
        `  ${made.key}`,
        "",
        "It is shown once: store it now (lds keys revoke " + made.prefix + " revokes it). Try it on the running server:",
        `  curl -X POST -H "Authorization: Bearer $KEY" -H 'content-type: application/json' \\`,
        `       -d '{"docsRepoUrl": "https://github.com/OWNER/REPO"}' ${base}/v2/add/repo/hostb`,
        `  curl -H "Authorization: Bearer $KEY" '${base}/v2/libs/search?libraryName=REPO'`,
        "More: docs/api.md (keys, teams, plans), docs/operations.md (admins, backups).",
        "",
      ].join("\n"),
    );
    return 0;
  });
}
