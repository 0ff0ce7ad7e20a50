import { inspect } from "../../ops/inspect.js";
import { printSummary } from "../summary.js";

export async function run(argv: { archive: string; json: boolean }): Promise<number> {
  const result = await inspect(argv.archive);
  if (argv.json) {
    const { files: _files, ...manifest } = result.manifest;
    process.stdout.write(JSON.stringify({ archive: result.archive, size: result.size, ...manifest, compatibility: result.compatibility }) + "\n");
  } else {
    printSummary(result.archive, result.size, result.manifest, result.compatibility);
  }
  return 0;
}
