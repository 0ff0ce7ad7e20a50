import { openRemoteArchive } from "../../destinations/registry.js";
import { inspect } from "../../ops/inspect.js";
import type { DestinationArgs } from "../destination-args.js";
import { printSummary } from "../summary.js";
import { keysFromArgs, type AgeArgs } from "../archive-keys.js";
import { printWarnings, renderWarnings } from "../warnings.js";

export async function run(argv: DestinationArgs & AgeArgs & { archive: string; json: boolean }): Promise<number> {
  const keys = keysFromArgs(argv);
  const remote = await openRemoteArchive(argv.archive, argv, process.env);
  const result = await inspect(argv.archive, remote, keys);
  if (argv.json) {
    const { files: _files, ...manifest } = result.manifest;
    process.stdout.write(
      JSON.stringify({ archive: result.archive, size: result.size, encryption: result.encryption, ...manifest, compatibility: result.compatibility, warnings: renderWarnings(result.warnings) }) + "\n",
    );
  } else {
    printSummary(result.archive, result.size, result.manifest, result.compatibility);
    if (result.encryption) process.stdout.write(`Encrypted with age: ${result.encryption.stanzas.join(", ")} stanza(s)\n`);
    printWarnings(result.warnings);
  }
  return 0;
}
