import { isS3Url, remoteArchive, s3Settings } from "../../destinations/location.js";
import { inspect } from "../../ops/inspect.js";
import type { DestinationArgs } from "../destination-args.js";
import { printSummary } from "../summary.js";

export async function run(argv: DestinationArgs & { archive: string; json: boolean }): Promise<number> {
  const remote = isS3Url(argv.archive) ? await remoteArchive(argv.archive, s3Settings(argv)) : undefined;
  const result = await inspect(argv.archive, remote);
  if (argv.json) {
    const { files: _files, ...manifest } = result.manifest;
    process.stdout.write(JSON.stringify({ archive: result.archive, size: result.size, ...manifest, compatibility: result.compatibility }) + "\n");
  } else {
    printSummary(result.archive, result.size, result.manifest, result.compatibility);
  }
  return 0;
}
