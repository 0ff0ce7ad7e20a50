import { summarise } from "../../search/library-summary.js";
import { withRecords } from "../with-volume.js";

/** `lds libraries list`: every library with its processing state (and why it failed), snippets and versions. */
export async function run(argv: { dataDir?: string; json: boolean }): Promise<number> {
  return withRecords(argv.dataDir, async ({ store }) => {
    const rows = await store.libraries.list();
    const libraries = await Promise.all(rows.map(async (row) => ({ ...(await summarise(store, row)), processing: row.state, reason: row.stateReason, source: row.source, private: row.private })));
    if (argv.json) {
      process.stdout.write(JSON.stringify({ libraries }, null, 2) + "\n");
      return 0;
    }
    if (libraries.length === 0) process.stdout.write("No libraries yet: submit one with POST /v2/add/repo/hostb or `lds ingest git URL`.\n");
    for (const lib of libraries) {
      const versions = lib.versions.length ? `, versions ${lib.versions.join(" ")}` : "";
      process.stdout.write(`${lib.id}  ${lib.processing}  ${lib.totalSnippets} snippets${versions}${lib.private ? "  (private)" : ""}\n`);
      if (lib.reason) process.stdout.write(`    ${lib.reason}\n`);
    }
    return 0;
  });
}
