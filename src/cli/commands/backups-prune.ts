import fs from "node:fs";
import { dataVolume, resolveDataDir } from "../../config/data-volume.js";
import { chooseEngine } from "../../engine/choose-engine.js";
import { prune } from "../../ops/retention.js";
import { destinationFromArgs, type DestinationArgs } from "../destination-args.js";
import { commandDatabase } from "../database.js";

export async function run(argv: DestinationArgs & { from?: string; keep: number; json: boolean }): Promise<number> {
  const destination = await destinationFromArgs(argv.from, argv);
  // Under the volume's backup lock, no backup of it is writing: what interrupted ones left can go too.
  // (A database shared by replicas is there whatever this directory holds: its backups' lock is taken there.)
  const volume = dataVolume(resolveDataDir(argv.dataDir, process.env), commandDatabase());
  const engine = chooseEngine(volume);
  const lock = engine.sharedByReplicas || fs.existsSync(engine.files(volume).records) ? await engine.lockBackups(volume, "backup") : null;
  let removed: string[];
  let incomplete: string[] = [];
  try {
    if (lock) incomplete = await destination.removeIncomplete();
    removed = await prune(destination, argv.keep);
  } finally {
    await lock?.release();
  }
  if (argv.json) {
    process.stdout.write(JSON.stringify({ destination: destination.description, kept: argv.keep, removed, incompleteRemoved: incomplete }) + "\n");
  } else {
    for (const name of removed) process.stdout.write(`removed ${name}\n`);
    for (const name of incomplete) process.stdout.write(`aborted the incomplete upload (or temporary file) of ${name}\n`);
    process.stdout.write(`Kept the newest ${argv.keep} archive(s) in ${destination.description}; removed ${removed.length}.\n`);
  }
  return 0;
}
