import { commandActor } from "../cli-actor.js";
import { createKey, revokeKey } from "../../ops/api-keys.js";
import { withRecords } from "../with-volume.js";

export async function run(argv: { _: string[]; email?: string; name?: string; prefix?: string; dataDir?: string; json?: boolean }): Promise<number> {
  return withRecords(argv.dataDir, async ({ store }) => {
    switch (argv._[1]) {
      case "create": {
        const { key, prefix } = await createKey(store, commandActor(), argv.email!, argv.name ?? null);
        if (argv.json) process.stdout.write(JSON.stringify({ key, prefix }) + "\n");
        else process.stdout.write(`${key}\nThis key is shown once: store it now. Revoke it with: lds keys revoke ${prefix}\n`);
        break;
      }
      case "revoke":
        await revokeKey(store, commandActor(), argv.prefix!);
        process.stdout.write(`Revoked ${argv.prefix}.\n`);
        break;
      default: {
        const keys = await store.apiKeys.list();
        if (argv.json) process.stdout.write(JSON.stringify(keys) + "\n");
        else if (keys.length === 0) process.stdout.write("No API keys yet. Create the first with: lds init --team NAME --email EMAIL (or lds keys create --email EMAIL).\n");
        else for (const k of keys) process.stdout.write(`${k.prefix}\t${k.email}\t${k.name ?? ""}\t${k.revokedAt ? "revoked" : "active"}\n`);
      }
    }
    return 0;
  });
}
