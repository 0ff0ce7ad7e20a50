import { createTeam, listTeams, requireTeam, restrictTeamLibraries, setTeamPlan, type Plan } from "../../store/accounts.js";
import { addTeamProject } from "../../store/connections.js";
import { withVolume } from "../with-volume.js";

export async function run(argv: { _: string[]; name?: string; plan?: Plan; libraries?: string[]; projectId?: string; projectName?: string; dataDir?: string; json?: boolean }): Promise<number> {
  return withVolume(argv.dataDir, ({ db }) => {
    switch (argv._[1]) {
      case "create": {
        const team = createTeam(db, argv.name!, argv.plan ?? "free");
        process.stdout.write(`Created team ${team.name} (${team.plan}).\n`);
        break;
      }
      case "set-plan":
        setTeamPlan(db, requireTeam(db, argv.name!), argv.plan!);
        process.stdout.write(`Team ${argv.name} is now on the ${argv.plan} plan.\n`);
        break;
      case "add-project":
        addTeamProject(db, requireTeam(db, argv.name!).id, argv.projectId!, argv.projectName ?? "");
        process.stdout.write(`Team ${argv.name} has project ${argv.projectId}.\n`);
        break;
      case "restrict":
        restrictTeamLibraries(db, requireTeam(db, argv.name!), argv.libraries ?? []);
        process.stdout.write(`Team ${argv.name} may use only: ${argv.libraries?.join(", ") || "no library"}.\n`);
        break;
      default: {
        const teams = listTeams(db);
        if (argv.json) process.stdout.write(JSON.stringify(teams) + "\n");
        else for (const t of teams) process.stdout.write(`${t.name}\t${t.plan}${t.restrict_libraries ? "\trestricted" : ""}\n`);
      }
    }
    return 0;
  });
}
