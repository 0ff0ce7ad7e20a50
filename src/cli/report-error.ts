import { EXIT, LdsError, fromSystemError, isDiskFull } from "../errors.js";
import { renderHint } from "../hints.js";
import { CLI_HINT_WORDS } from "./hint-words.js";

/**
 * Print an error for an operator: `Error: …` and `Hint: …` on stderr, or one JSON object with `--json`.
 * Returns the exit code from the table. Unknown errors print their message, never a stack or a secret.
 */
export function reportError(err: unknown, json: boolean): number {
  const lds =
    err instanceof LdsError
      ? err
      : isDiskFull(err)
        ? fromSystemError(err, "the data volume")
        : new LdsError("internal_error", `Unexpected error: ${(err as Error)?.message ?? String(err)}`, {
            hint: "Run again with LDS_DEBUG=1 for details, and report it if it persists.",
          });
  // Settings and actions named neutrally in the hint ({s3.region}) become this shell's flags, variables and commands.
  const hint = lds.hint ? renderHint(lds.hint, CLI_HINT_WORDS) : undefined;
  if (json) {
    process.stderr.write(JSON.stringify({ error: lds.code, message: lds.message, hint: hint ?? null }) + "\n");
  } else {
    process.stderr.write(`Error: ${lds.message}\n`);
    if (hint) process.stderr.write(`Hint: ${hint}\n`);
  }
  if (process.env.LDS_DEBUG && err instanceof Error) process.stderr.write(`${err.stack}\n`);
  return lds.exitCode ?? EXIT.internal;
}
