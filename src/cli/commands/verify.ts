import { openRemoteArchive } from "../../destinations/registry.js";
import { verify } from "../../ops/verify.js";
import type { DestinationArgs } from "../destination-args.js";
import { byteProgress } from "../progress.js";
import { interruptSignal } from "../signals.js";
import { printSummary } from "../summary.js";
import type { ArchiveKeys } from "../../archive/age.js";
import { keysFromArgs, type AgeArgs } from "../archive-keys.js";
import { printWarnings, renderWarnings } from "../warnings.js";

export async function run(argv: DestinationArgs & AgeArgs & { archive: string; json: boolean; restoreTest: boolean }): Promise<number> {
  const keys = keysFromArgs(argv);
  if (argv.restoreTest) return drill(argv, keys);
  const interrupt = interruptSignal();
  const progress = byteProgress("Verifying", !argv.json && process.stderr.isTTY === true);
  try {
    const remote = await openRemoteArchive(argv.archive, argv, process.env);
    const result = await verify(argv.archive, { remote, keys, signal: interrupt.signal, onProgress: progress.update });
    progress.stop();
    if (argv.json) {
      const { files, ...manifest } = result.manifest;
      process.stdout.write(
        JSON.stringify({
          ok: true,
          archive: result.archive,
          size: result.size,
          encryption: result.encryption,
          ...manifest,
          files,
          checks: result.checks,
          compatibility: result.compatibility,
          warnings: renderWarnings(result.warnings),
          durationMs: result.durationMs,
        }) + "\n",
      );
    } else {
      printSummary(result.archive, result.size, result.manifest, result.compatibility);
      for (const check of result.checks) process.stdout.write(`ok  ${check.part}: ${check.detail}\n`);
      if (result.encryption) process.stdout.write(`ok  age encryption: header MAC and every chunk authenticated (${result.encryption.stanzas.join(", ")})\n`);
      process.stdout.write(`Archive OK (${(result.durationMs / 1000).toFixed(1)} s).\n`);
      printWarnings(result.warnings);
    }
    return 0;
  } finally {
    progress.stop();
    interrupt.dispose();
  }
}

/** `lds verify --restore-test`: the restore drill (ops/restore-drill.ts), printed as verify prints its checks. */
async function drill(argv: DestinationArgs & { archive: string; json: boolean }, keys: ArchiveKeys): Promise<number> {
  const interrupt = interruptSignal();
  try {
    const remote = await openRemoteArchive(argv.archive, argv, process.env);
    // Loaded only for a drill: it brings the store (25 modules), which a plain verify's start would pay for.
    const { restoreDrill } = await import("../../ops/restore-drill.js");
    const result = await restoreDrill(argv.archive, { remote, keys, signal: interrupt.signal });
    if (argv.json) {
      process.stdout.write(JSON.stringify({ ok: true, archive: result.archive, restoreTest: true, createdAt: result.manifest.createdAt, checks: result.checks, durationMs: result.durationMs }) + "\n");
    } else {
      for (const check of result.checks) process.stdout.write(`ok  ${check.part}: ${check.detail}\n`);
      process.stdout.write(`Restore drill passed (${(result.durationMs / 1000).toFixed(1)} s): the archive restores to what was backed up.\n`);
    }
    return 0;
  } finally {
    interrupt.dispose();
  }
}
