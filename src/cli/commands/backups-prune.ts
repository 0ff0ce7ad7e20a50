import { prune } from "../../ops/retention.js";
import { destinationFromArgs, type DestinationArgs } from "../destination-args.js";

export async function run(argv: DestinationArgs & { from?: string; keep: number; json: boolean }): Promise<number> {
  const destination = await destinationFromArgs(argv.from, argv);
  const removed = await prune(destination, argv.keep);
  if (argv.json) {
    process.stdout.write(JSON.stringify({ destination: destination.description, kept: argv.keep, removed }) + "\n");
  } else {
    for (const name of removed) process.stdout.write(`removed ${name}\n`);
    process.stdout.write(`Kept the newest ${argv.keep} archive(s) in ${destination.description}; removed ${removed.length}.\n`);
  }
  return 0;
}
