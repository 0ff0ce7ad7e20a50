import type { Plan } from "../../store/records.js";
import { isRestrictive } from "../../search/access-policy.js";
import { commandActor } from "../cli-actor.js";
import { addTeamProject, changeTeamPlan, changeTeamPolicy, createTeam } from "../../ops/teams.js";
import { withRecords } from "../with-volume.js";

export async function run(argv: { _: string[]; name?: string; plan?: Plan; libraries?: string[]; projectId?: string; projectName?: string; dataDir?: string; json?: boolean }): Promise<number> {
  return withRecords(argv.dataDir, async ({ store }) => {
    switch (argv._[1]) {
      case "create": {
        const team = await createTeam(store, commandActor(), argv.name!, argv.plan ?? "free");
        process.stdout.write(`Created team ${team.name} (${team.plan}).\n`);
        break;
      }
      case "set-plan":
        await changeTeamPlan(store, commandActor(), argv.name!, argv.plan!);
        process.stdout.write(`Team ${argv.name} is now on the ${argv.plan} plan.\n`);
        break;
      case "add-project":
        await addTeamProject(store, commandActor(), argv.name!, argv.projectId!, argv.projectName ?? "");
        process.stdout.write(`Team ${argv.name} has project ${argv.projectId}.\n`);
        break;
      case "restrict": {
        // The same change as PATCH /v2/policies: only these libraries (none when the list is empty).
        const team = await store.teams.require(argv.name!);
        await changeTeamPolicy(store, commandActor(), team.id, { libraries: { allow: argv.libraries ?? [] } });
        process.stdout.write(`Team ${argv.name} may use only: ${argv.libraries?.join(", ") || "no library"}.\n`);
        break;
      }
      default: {
        const teams = await Promise.all((await store.teams.list()).map(async (t) => ({ ...t, policy: await store.teams.policy(t.id) })));
        if (argv.json) process.stdout.write(JSON.stringify(teams) + "\n");
        else for (const t of teams) process.stdout.write(`${t.name}\t${t.plan}${t.policy && isRestrictive(t.policy) ? "\trestricted" : ""}\n`);
      }
    }
    return 0;
  });
}
