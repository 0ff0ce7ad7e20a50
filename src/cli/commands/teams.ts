import type { Plan } from "../../store/accounts.js";
import { withVolume } from "../with-volume.js";

export async function run(argv: { _: string[]; name?: string; plan?: Plan; libraries?: string[]; projectId?: string; projectName?: string; dataDir?: string; json?: boolean }): Promise<number> {
  return withVolume(argv.dataDir, async ({ store }) => {
    switch (argv._[1]) {
      case "create": {
        const team = await store.teams.create(argv.name!, argv.plan ?? "free");
        process.stdout.write(`Created team ${team.name} (${team.plan}).\n`);
        break;
      }
      case "set-plan":
        await store.teams.setPlan(await store.teams.require(argv.name!), argv.plan!);
        process.stdout.write(`Team ${argv.name} is now on the ${argv.plan} plan.\n`);
        break;
      case "add-project":
        await store.teams.addProject((await store.teams.require(argv.name!)).id, argv.projectId!, argv.projectName ?? "");
        process.stdout.write(`Team ${argv.name} has project ${argv.projectId}.\n`);
        break;
      case "restrict":
        await store.teams.restrictLibraries(await store.teams.require(argv.name!), argv.libraries ?? []);
        process.stdout.write(`Team ${argv.name} may use only: ${argv.libraries?.join(", ") || "no library"}.\n`);
        break;
      default: {
        const teams = await store.teams.list();
        if (argv.json) process.stdout.write(JSON.stringify(teams) + "\n");
        else for (const t of teams) process.stdout.write(`${t.name}\t${t.plan}${t.restrict_libraries ? "\trestricted" : ""}\n`);
      }
    }
    return 0;
  });
}
