import { LdsError } from "../../errors.js";
import { requireTeam } from "../../store/accounts.js";
import { addGitConnection, addWikiConnection } from "../../store/connections.js";
import { withVolume } from "../with-volume.js";

export async function run(argv: { _: string[]; team: string; cloudId?: string; siteUrl?: string; apiBase?: string; dataDir?: string }): Promise<number> {
  // Never a flag: command lines show in `ps` and shell history.
  const token = process.env.LDS_CONNECTION_TOKEN;
  if (!token) throw new LdsError("validation_error", "Set LDS_CONNECTION_TOKEN to the account's token.", { hint: "It is sealed with secret.key and never shown again." });
  return withVolume(argv.dataDir, ({ db, key }) => {
    const team = requireTeam(db, argv.team);
    if (argv._[1] === "add-git") {
      addGitConnection(db, key, team.id, token);
      process.stdout.write(`Connected a git account for team ${team.name}.\n`);
      return 0;
    }
    const apiBase = argv.apiBase ?? `https://api.atlassian.com/ex/confluence/${argv.cloudId}`;
    if (!/^https?:\/\//.test(apiBase) || !/^https?:\/\//.test(argv.siteUrl!)) throw new LdsError("validation_error", "--site-url and --api-base must be http(s) URLs.");
    addWikiConnection(db, key, { teamId: team.id, cloudId: argv.cloudId!, siteUrl: argv.siteUrl!, apiBase, token });
    process.stdout.write(`Connected wiki ${argv.siteUrl} (cloud ${argv.cloudId}) for team ${team.name}; its token goes only to ${apiBase}.\n`);
    return 0;
  });
}
