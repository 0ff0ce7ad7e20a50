import fs from "node:fs";
import { dataVolume, resolveDataDir } from "../../config/data-volume.js";
import { chooseEngine } from "../../engine/choose-engine.js";
import { prune } from "../../ops/retention.js";
import { lockBackup } from "../../locks/volume-locks.js";
import { destinationFromArgs, type DestinationArgs } from "../destination-args.js";

export async function run(argv: DestinationArgs & { from?: string; keep: number; json: boolean }): Promise<number> {
  const destination = await destinationFromArgs(argv.from, argv);
  // Under the volume's backup lock, no backup of it is writing: what interrupted ones left can go too.
  const volume = dataVolume(resolveDataDir(argv.dataDir, process.env));
  const lock = fs.existsSync(chooseEngine(volume).files(volume).records) ? lockBackup(volume) : null;
  let removed: string[];
  let incomplete: string[] = [];
  try {
    if (lock) incomplete = await destination.removeIncomplete();
    removed = await prune(destination, argv.keep);
  } finally {
    lock?.release();
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
