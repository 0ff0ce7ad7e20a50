import { withRecords } from "../with-volume.js";

/** `lds audit`: the newest operator actions that changed what clients are served. */
export async function run(argv: { dataDir?: string; json: boolean; limit: number }): Promise<number> {
  return withRecords(argv.dataDir, async ({ store }) => {
    const entries = await store.audit.list(argv.limit);
    if (argv.json) process.stdout.write(JSON.stringify({ entries }, null, 2) + "\n");
    else if (entries.length === 0) process.stdout.write("The audit log is empty: no account, key, team, policy, connection or library change has been made.\n");
    else for (const e of entries) process.stdout.write(`${e.at}  ${e.actor}  ${e.action}  ${e.subject}  ${JSON.stringify(e.details)}\n`);
    return 0;
  });
}
