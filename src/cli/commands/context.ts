import { LdsError } from "../../errors.js";
import { buildContext, contextAsJson } from "../../search/context.js";
import { CONTEXT_TOKENS } from "../../search/context-budget.js";
import { contextAsText } from "../../search/context-text.js";
import { OPERATOR_ACCESS } from "../../search/library-access.js";
import { parseLibraryRef } from "../../search/library-ref.js";
import { withVolume } from "../with-volume.js";

/** `lds context ID QUERY`: the snippets /v2/context would answer, as text (or the API's JSON with --json). */
export async function run(argv: { id: string; query: string; tokens: number; dataDir?: string; json: boolean }): Promise<number> {
  if (!Number.isInteger(argv.tokens) || argv.tokens < CONTEXT_TOKENS.min || argv.tokens > CONTEXT_TOKENS.max) {
    throw new LdsError("validation_error", `--tokens must be a whole number from ${CONTEXT_TOKENS.min} to ${CONTEXT_TOKENS.max}, not ${argv.tokens}.`);
  }
  parseLibraryRef(argv.id);
  return withVolume(
    argv.dataDir,
    async (volume) => {
      const answer = await buildContext(volume, OPERATOR_ACCESS, { libraryId: argv.id, query: argv.query, tokens: argv.tokens });
      if (argv.json) process.stdout.write(JSON.stringify(contextAsJson(answer), null, 2) + "\n");
      else process.stdout.write(contextAsText(answer) || `No snippet fits a budget of ${argv.tokens} tokens; try a larger --tokens.\n`);
      return 0;
    },
    { vectors: true, command: "lds context" },
  );
}
