import type { Role } from "../../store/records.js";
import { commandActor } from "../cli-actor.js";
import { addUser, removeUser } from "../../ops/users.js";
import { withRecords } from "../with-volume.js";

export async function run(argv: { _: Array<string | number>; email: string; team?: string; role?: Role; dataDir?: string }): Promise<number> {
  return withRecords(argv.dataDir, async ({ store }) => {
    if (argv._[1] === "remove") {
      const user = await removeUser(store, commandActor(), argv.email);
      process.stdout.write(`Removed ${user.email}; its API keys now answer user_not_found. \`lds users add\` brings it back.\n`);
      return 0;
    }
    const { user } = await addUser(store, commandActor(), argv.team!, argv.email, argv.role ?? "member");
    process.stdout.write(`Added ${user.email} to ${argv.team} as ${user.role}.\n`);
    return 0;
  });
}
