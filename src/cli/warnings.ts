import type { ArchiveWarning } from "../archive/archive-warnings.js";
import { renderHint } from "../hints.js";
import { CLI_HINT_WORDS } from "./hint-words.js";

/** Warnings in this shell's words: for --json output, and as `Warning:` lines on stderr (the command succeeded). */
export function renderWarnings(warnings: ArchiveWarning[]): ArchiveWarning[] {
  return warnings.map((w) => ({ ...w, hint: renderHint(w.hint, CLI_HINT_WORDS) }));
}

export function printWarnings(warnings: ArchiveWarning[]): void {
  for (const w of renderWarnings(warnings)) process.stderr.write(`Warning: ${w.message}\nHint: ${w.hint}\n`);
}
