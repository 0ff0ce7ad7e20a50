import { LdsError } from "../../errors.js";
import { withVolume } from "../with-volume.js";

interface ConnectionArgs {
  _: string[];
  team: string;
  host?: string[];
  cloudId?: string;
  siteUrl?: string;
  apiBase?: string;
  dataDir?: string;
}

const HOST = /^[a-z0-9.-]+(:\d{1,5})?$/i;

export async function run(argv: ConnectionArgs): Promise<number> {
  // Never a flag: command lines show in `ps` and shell history.
  const token = process.env.LDS_CONNECTION_TOKEN;
  if (!token) throw new LdsError("validation_error", "Set LDS_CONNECTION_TOKEN to the account's token.", { hint: "It is sealed with secret.key and never shown again." });
  if (argv._[1] === "add-git") {
    const hosts = argv.host ?? [];
    const bad = hosts.find((h) => !HOST.test(h));
    if (hosts.length === 0 || bad !== undefined) {
      throw new LdsError("validation_error", bad === undefined ? "Name the git host(s) the token is for with --host." : `--host ${bad} is not a host[:port].`, {
        hint: "For example --host github.com, or --host git.example.com:8443: the token is never sent to any other host.",
      });
    }
    return withVolume(argv.dataDir, async ({ store }) => {
      const team = await store.teams.require(argv.team);
      await store.connections.addGit(team.id, token, hosts);
      process.stdout.write(`Connected a git account for team ${team.name}; its token goes only to ${hosts.join(", ")}.\n`);
      return 0;
    });
  }
  return withVolume(argv.dataDir, async ({ store }) => {
    const team = await store.teams.require(argv.team);
    const apiBase = argv.apiBase ?? `https://api.atlassian.com/ex/confluence/${argv.cloudId}`;
    if (!/^https?:\/\//.test(apiBase) || !/^https?:\/\//.test(argv.siteUrl!)) throw new LdsError("validation_error", "--site-url and --api-base must be http(s) URLs.");
    await store.connections.addWiki({ teamId: team.id, cloudId: argv.cloudId!, siteUrl: argv.siteUrl!, apiBase, token });
    process.stdout.write(`Connected wiki ${argv.siteUrl} (cloud ${argv.cloudId}) for team ${team.name}; its token goes only to ${apiBase}.\n`);
    return 0;
  });
}
