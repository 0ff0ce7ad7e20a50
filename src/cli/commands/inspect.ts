import { openRemoteArchive } from "../../destinations/registry.js";
import { inspect } from "../../ops/inspect.js";
import type { DestinationArgs } from "../destination-args.js";
import { printSummary } from "../summary.js";

export async function run(argv: DestinationArgs & { archive: string; json: boolean }): Promise<number> {
  const remote = await openRemoteArchive(argv.archive, argv);
  const result = await inspect(argv.archive, remote);
  if (argv.json) {
    const { files: _files, ...manifest } = result.manifest;
    process.stdout.write(JSON.stringify({ archive: result.archive, size: result.size, ...manifest, compatibility: result.compatibility }) + "\n");
  } else {
    printSummary(result.archive, result.size, result.manifest, result.compatibility);
  }
  return 0;
}
