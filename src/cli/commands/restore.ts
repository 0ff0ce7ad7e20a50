import prompts from "prompts";
import { compatibility } from "../../archive/compatibility.js";
import type { Manifest } from "../../archive/manifest.js";
import { resolveDataDir } from "../../config/data-volume.js";
import { LdsError } from "../../errors.js";
import { describeRecovery } from "../../ops/restore-journal.js";
import { restore } from "../../ops/restore.js";
import { openRemoteArchive } from "../../destinations/registry.js";
import type { DestinationArgs } from "../destination-args.js";
import { byteProgress } from "../progress.js";
import { interruptSignal } from "../signals.js";
import { summaryLines } from "../summary.js";
import { keysFromArgs, type AgeArgs } from "../archive-keys.js";
import { requireCommandWork } from "../database.js";

export async function run(argv: DestinationArgs & AgeArgs & { archive: string; yes: boolean; json: boolean }): Promise<number> {
  requireCommandWork("restore", "lds restore");
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
    const result = await restore({
      dataDir,
      archive: argv.archive,
      download: await openRemoteArchive(argv.archive, argv, process.env),
      keys,
      signal: interrupt.signal,
      onProgress: progress.update,
      confirm: async (manifest) => {
        progress.stop();
        return argv.yes || (await askToReplace(argv.archive, dataDir, manifest));
      },
    });
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

async function askToReplace(archive: string, dataDir: string, manifest: Manifest): Promise<boolean> {
  process.stderr.write(summaryLines(archive, null, manifest, compatibility(manifest)).join("\n") + "\n");
  const answer = await prompts(
    {
      type: "confirm",
      name: "go",
      message: `Replace the data in ${dataDir} with this archive? (the current files are kept in pre-restore-<time>/)`,
      initial: false,
      stdout: process.stderr,
    },
    { onCancel: () => true },
  );
  return answer.go === true;
}
