import { OPERATOR_ACCESS } from "../../search/library-access.js";
import { searchLibraries } from "../../search/library-search.js";
import { withVolume } from "../with-volume.js";

/** `lds search NAME [QUERY]`: what the index holds under a name, as the API would rank it (operators see all). */
export async function run(argv: { name: string; query?: string; dataDir?: string; json: boolean }): Promise<number> {
  return withVolume(
    argv.dataDir,
    async (volume) => {
      const results = await searchLibraries(volume.store, volume.index, OPERATOR_ACCESS, { libraryName: argv.name, query: argv.query });
      if (argv.json) {
        process.stdout.write(JSON.stringify({ results }, null, 2) + "\n");
        return 0;
      }
      for (const lib of results) {
        const versions = lib.versions.length ? `  versions: ${lib.versions.join(", ")}` : "";
        process.stdout.write(`${lib.id}  ${lib.state}  ${lib.totalSnippets} snippets, ${lib.totalTokens} tokens${lib.branch ? `  (${lib.branch})` : ""}${versions}\n`);
        if (lib.description) process.stdout.write(`    ${lib.description}\n`);
      }
      return 0;
    },
    { command: "lds search" },
  );
}
