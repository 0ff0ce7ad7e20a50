import { formatBytes } from "../../archive/read-archive.js";
import { destinationFromArgs, type DestinationArgs } from "../destination-args.js";

export async function run(argv: DestinationArgs & { from?: string; json: boolean }): Promise<number> {
  const destination = await destinationFromArgs(argv.from, argv);
  const archives = [];
  for await (const archive of destination.list()) archives.push(archive);
  if (argv.json) {
    process.stdout.write(JSON.stringify({ destination: destination.description, archives }) + "\n");
  } else if (archives.length === 0) {
    process.stdout.write(`No LDS archives in ${destination.description}.\n`);
  } else {
    for (const a of archives) process.stdout.write(`${a.name}  ${formatBytes(a.size).padStart(10)}  ${a.location}\n`);
  }
  return 0;
}
