import path from "node:path";
import { dataVolume, resolveDataDir } from "../../config/data-volume.js";
import { createLocalDestination } from "../../destinations/local.js";
import { backup } from "../../ops/backup.js";
import { formatBytes } from "../../archive/read-archive.js";
import { byteProgress } from "../progress.js";
import { interruptSignal } from "../signals.js";

export async function run(argv: { dataDir?: string; to?: string; gzip: boolean; json: boolean }): Promise<number> {
  const volume = dataVolume(resolveDataDir(argv.dataDir));
  const destination = createLocalDestination({ dir: argv.to ? path.resolve(argv.to) : volume.backups });
  const interrupt = interruptSignal();
  const progress = byteProgress("Writing archive", !argv.json && process.stderr.isTTY === true);
  try {
    const result = await backup({
      dataDir: volume.root,
      destination,
      gzip: argv.gzip,
      signal: interrupt.signal,
      onProgress: (p) => p.phase === "write" && progress.update(p.bytes, p.totalBytes),
    });
    progress.stop();
    if (argv.json) {
      process.stdout.write(JSON.stringify({ path: result.location, ...result }) + "\n");
    } else {
      process.stdout.write(
        `Backup written: ${result.location}\n` +
          `  ${formatBytes(result.size)}, sha256 ${result.sha256}\n` +
          `  ${result.libraries} libraries, schema version ${result.schemaVersion}, ${(result.durationMs / 1000).toFixed(1)} s\n` +
          (result.partial.length ? `  Being indexed at snapshot time (re-indexed on restore): ${result.partial.join(", ")}\n` : ""),
      );
    }
    return 0;
  } finally {
    progress.stop();
    interrupt.dispose();
  }
}
