import { LdsError } from "../../errors.js";
import { addGitConnection, addWikiConnection, removeConnection } from "../../ops/connections.js";
import { commandActor } from "../cli-actor.js";
import { withRecords } from "../with-volume.js";

interface ConnectionArgs {
  _: string[];
  team: string;
  host?: string[];
  cloudId?: string;
  siteUrl?: string;
  apiBase?: string;
  dataDir?: string;
  id?: number;
  json?: boolean;
}

const HOST = /^[a-z0-9.-]+(:\d{1,5})?$/i;

export async function run(argv: ConnectionArgs): Promise<number> {
  if (argv._[1] === "list") return list(argv);
  if (argv._[1] === "remove") return remove(argv);
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
    return withRecords(argv.dataDir, async ({ store }) => {
      const team = await addGitConnection(store, commandActor(), argv.team, token, hosts);
      process.stdout.write(`Connected a git account for team ${team.name}; its token goes only to ${hosts.join(", ")}.\n`);
      return 0;
    });
  }
  return withRecords(argv.dataDir, async ({ store }) => {
    const apiBase = argv.apiBase ?? `https://api.atlassian.com/ex/confluence/${argv.cloudId}`;
    if (!/^https?:\/\//.test(apiBase) || !/^https?:\/\//.test(argv.siteUrl!)) throw new LdsError("validation_error", "--site-url and --api-base must be http(s) URLs.");
    const team = await addWikiConnection(store, commandActor(), { team: argv.team, cloudId: argv.cloudId!, siteUrl: argv.siteUrl!, apiBase, token });
    process.stdout.write(`Connected wiki ${argv.siteUrl} (cloud ${argv.cloudId}) for team ${team.name}; its token goes only to ${apiBase}.\n`);
    return 0;
  });
}

/** Every team's connections, pasted or made in the dashboard by OAuth (account, state, expiry), never a token. */
async function list(argv: ConnectionArgs): Promise<number> {
  return withRecords(argv.dataDir, async ({ store }) => {
    const teams = new Map((await store.teams.list()).map((t) => [t.id, t.name]));
    const grants = new Map((await store.oauth.list()).map((g) => [g.id, g]));
    const rows = (await store.connections.list()).map((c) => {
      const grant = c.grantId === null ? undefined : grants.get(c.grantId);
      return {
        id: c.id,
        team: teams.get(c.teamId) ?? String(c.teamId),
        kind: c.kind,
        validFor: c.kind === "git" ? c.hosts : [c.siteUrl ?? ""],
        tokenGoesTo: c.kind === "git" ? c.hosts : [c.apiBase ?? ""],
        madeBy: grant ? `oauth:${grant.provider}` : "pasted token",
        account: grant?.account ?? null,
        state: grant?.state ?? "active",
        expiresAt: grant?.expiresAt ?? null,
        problem: grant?.problem ?? null,
      };
    });
    if (argv.json) process.stdout.write(JSON.stringify({ connections: rows }, null, 2) + "\n");
    else if (rows.length === 0) process.stdout.write("No connections. Connect accounts in the dashboard's Connections page, or with lds connections add-git / add-wiki.\n");
    else {
      for (const r of rows) {
        process.stdout.write(`${r.id}\t${r.team}\t${r.kind}\t${r.validFor.join(",")}\t${r.madeBy}${r.account ? ` (${r.account})` : ""}\t${r.state}${r.expiresAt ? `\texpires ${r.expiresAt}` : ""}\n`);
        if (r.problem) process.stdout.write(`    ${r.problem}\n`);
      }
    }
    return 0;
  });
}

/** Remove a connection: a pasted token is deleted; an OAuth one is disconnected (revoked at the provider where it can be). */
async function remove(argv: ConnectionArgs): Promise<number> {
  return withRecords(argv.dataDir, async ({ store }) => {
    // Checked here too, for the hint in this shell's words.
    if (!(await store.connections.list()).some((c) => c.id === argv.id)) throw new LdsError("connection_not_found", `No connection ${argv.id}.`, { hint: "List them with lds connections list." });
    const { connection, disconnected } = await removeConnection(store, commandActor(), argv.id!);
    if (!disconnected) process.stdout.write(`Removed connection ${connection.id} and its token.\n`);
    else
      process.stdout.write(
        `Disconnected the OAuth account of connection ${connection.id}${disconnected.revokedAtProvider ? "; the provider revoked its token" : ""}.${disconnected.note ? ` ${disconnected.note}` : ""}\n`,
      );
    return 0;
  });
}
