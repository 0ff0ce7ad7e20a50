import prompts from "prompts";
import { compatibility } from "../../archive/compatibility.js";
import type { Manifest } from "../../archive/manifest.js";
import { resolveDataDir } from "../../config/data-volume.js";
import { databaseSettingsFromEnv, type DatabaseSettings } from "../../config/database-settings.js";
import { chooseEngine, requireEngineWork } from "../../engine/choose-engine.js";
import { LdsError } from "../../errors.js";
import { describeRecovery } from "../../ops/restore-journal.js";
import { restore, type RestoreOptions } from "../../ops/restore.js";
import { openRemoteArchive } from "../../destinations/registry.js";
import type { DestinationArgs } from "../destination-args.js";
import { byteProgress } from "../progress.js";
import { interruptSignal } from "../signals.js";
import { summaryLines } from "../summary.js";
import { keysFromArgs, type AgeArgs } from "../archive-keys.js";
import { commandDatabase } from "../database.js";
import { restoreIntoDatabase } from "./restore-into-database.js";

type RestoreArgs = DestinationArgs & AgeArgs & { archive: string; yes: boolean; json: boolean; databaseUrl?: string };

export async function run(argv: RestoreArgs): Promise<number> {
  // --database-url chooses PostgreSQL as LDS_DATABASE_URL does, for this command only.
  const database: DatabaseSettings = argv.databaseUrl ? databaseSettingsFromEnv({ ...process.env, LDS_DATABASE_URL: argv.databaseUrl }, "--database-url") : commandDatabase();
  requireEngineWork(chooseEngine({ engine: database }), "restore", "lds restore");
  const dataDir = resolveDataDir(argv.dataDir, process.env);
  const keys = keysFromArgs(argv);
  // Refuse up front rather than verify a large archive and then fail for want of a terminal.
  if (!argv.yes && !process.stdin.isTTY) {
    throw new LdsError("confirmation_required", "Restore needs confirmation, and there is no terminal to ask on.", {
      hint: "Run it in a terminal, or add --yes to restore without asking.",
    });
  }
  const interrupt = interruptSignal();
  const progress = byteProgress("Verifying archive", !argv.json && process.stderr.isTTY === true);
  try {
    const options: RestoreOptions = {
      dataDir,
      archive: argv.archive,
      download: await openRemoteArchive(argv.archive, argv, process.env),
      keys,
      signal: interrupt.signal,
      onProgress: progress.update,
      confirm: async (manifest) => {
        progress.stop();
        return argv.yes || (await askToReplace(argv.archive, database.name === "postgres" ? "the database's live schema" : dataDir, manifest));
      },
    };
    if (database.name === "postgres") return await restoreIntoDatabase(options, database, argv.json);
    const result = await restore(options);
    const recovered = describeRecovery(result.recovery);
    if (argv.json) {
      process.stdout.write(
        JSON.stringify({ ok: true, archive: result.archive, dataDir, preRestoreDir: result.preRestoreDir, requeued: result.requeued, needsMigration: result.needsMigration, recovered }) + "\n",
      );
      return 0;
    }
    for (const line of recovered) process.stdout.write(`${line}\n`);
    process.stdout.write(`Restored ${dataDir} from ${result.archive} (created ${result.manifest.createdAt}).\n`);
    if (result.preRestoreDir) process.stdout.write(`The previous data was moved to ${result.preRestoreDir} (nothing was deleted).\n`);
    if (result.requeued.length) process.stdout.write(`Queued for re-indexing (partial at backup time): ${result.requeued.join(", ")}\n`);
    if (result.needsMigration) process.stdout.write(`The database is from an older release; it is migrated at the next \`lds serve\`.\n`);
    process.stdout.write("Start the server to use the restored data.\n");
    return 0;
  } finally {
    progress.stop();
    interrupt.dispose();
  }
}

async function askToReplace(archive: string, target: string, manifest: Manifest): Promise<boolean> {
  process.stderr.write(summaryLines(archive, null, manifest, compatibility(manifest)).join("\n") + "\n");
  const answer = await prompts(
    {
      type: "confirm",
      name: "go",
      message: `Replace the data in ${target} with this archive? (the current data is kept: nothing is deleted)`,
      initial: false,
      stdout: process.stderr,
    },
    { onCancel: () => true },
  );
  return answer.go === true;
}
