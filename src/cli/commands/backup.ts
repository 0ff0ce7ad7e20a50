import { dataVolume, resolveDataDir } from "../../config/data-volume.js";
import { backup } from "../../ops/backup.js";
import { formatBytes } from "../../archive/read-archive.js";
import { byteProgress } from "../progress.js";
import { destinationFromArgs, type DestinationArgs } from "../destination-args.js";
import { interruptSignal } from "../signals.js";
import { encryptionFromArgs, type AgeArgs } from "../archive-keys.js";
import { printWarnings, renderWarnings } from "../warnings.js";
import { commandDatabase, requireCommandWork } from "../database.js";

export async function run(argv: DestinationArgs & AgeArgs & { to?: string; gzip: boolean; keep?: number; json: boolean }): Promise<number> {
  requireCommandWork("snapshot", "lds backup");
  const volume = dataVolume(resolveDataDir(argv.dataDir, process.env), commandDatabase());
  const encryption = await encryptionFromArgs(argv);
  const destination = await destinationFromArgs(argv.to, argv);
  const interrupt = interruptSignal();
  const progress = byteProgress("Writing archive", !argv.json && process.stderr.isTTY === true);
  try {
    const result = await backup({
      dataDir: volume.root,
      database: volume.engine,
      destination,
      gzip: argv.gzip,
      keep: argv.keep,
      encryption,
      signal: interrupt.signal,
      onProgress: (p) => p.phase === "write" && progress.update(p.bytes, p.totalBytes),
    });
    progress.stop();
    if (argv.json) {
      process.stdout.write(JSON.stringify({ path: result.location, ...result, warnings: renderWarnings(result.warnings) }) + "\n");
    } else {
      process.stdout.write(
        `Backup written: ${result.location}\n` +
          `  ${formatBytes(result.size)}, sha256 ${result.sha256}${result.encryption ? `, encrypted with ${result.encryption}` : ""}\n` +
          `  ${result.libraries} libraries, schema version ${result.schemaVersion}, ${(result.durationMs / 1000).toFixed(1)} s\n` +
          (result.partial.length ? `  Being indexed at snapshot time (re-indexed on restore): ${result.partial.join(", ")}\n` : "") +
          (result.pruned.length ? `  Retention removed: ${result.pruned.join(", ")}\n` : "") +
          (result.incompleteRemoved.length ? `  Removed what interrupted backups left: ${result.incompleteRemoved.join(", ")}\n` : ""),
      );
    }
    if (result.incompleteError) {
      process.stderr.write(`Warning: the archive is safe, but leftovers of interrupted backups could not be removed: ${result.incompleteError} (see docs/destinations/s3.md, "Incomplete uploads").\n`);
    }
    printWarnings(result.warnings);
    if (result.pruneError) process.stderr.write(`Warning: the archive is safe, but pruning old archives failed: ${result.pruneError}\n`);
    return 0;
  } finally {
    progress.stop();
    interrupt.dispose();
  }
}
