import { addUser, requireTeam, type Role } from "../../store/accounts.js";
import { withVolume } from "../with-volume.js";

export async function run(argv: { email: string; team: string; role: Role; dataDir?: string }): Promise<number> {
  return withVolume(argv.dataDir, ({ db }) => {
    const user = addUser(db, requireTeam(db, argv.team), argv.email, argv.role);
    process.stdout.write(`Added ${user.email} to ${argv.team} as ${user.role}.\n`);
    return 0;
  });
}
