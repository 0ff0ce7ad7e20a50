import type { Compatibility } from "../archive/compatibility.js";
import type { Manifest } from "../archive/manifest.js";
import { formatBytes } from "../archive/read-archive.js";

/** The archive summary an operator reads before restoring: what, from when, from which version. */
export function summaryLines(archive: string, size: number | null, manifest: Manifest, compat: Compatibility): string[] {
  const lines = [
    `Archive:        ${archive}${size === null ? "" : ` (${formatBytes(size)})`}`,
    `Created:        ${manifest.createdAt}`,
    `App version:    ${manifest.appVersion} (format ${manifest.formatVersion}, schema ${manifest.schemaVersion})`,
    `Libraries:      ${manifest.libraries.length}`,
  ];
  for (const lib of manifest.libraries.slice(0, 20)) {
    lines.push(`  ${lib.id}  ${lib.state}, ${lib.snippets} snippets${manifest.partial.includes(lib.id) ? " (partial)" : ""}`);
  }
  if (manifest.libraries.length > 20) lines.push(`  … and ${manifest.libraries.length - 20} more (--json lists all)`);
  lines.push(compat.restorable ? `Restorable:     yes${compat.needsMigration ? " (older schema: migrated at the next server start)" : ""}` : `Restorable:     no: ${compat.reason}`);
  return lines;
}

export function printSummary(archive: string, size: number, manifest: Manifest, compat: Compatibility): void {
  process.stdout.write(summaryLines(archive, size, manifest, compat).join("\n") + "\n");
}
