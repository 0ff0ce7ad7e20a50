import { libraryMetrics } from "../../ops/library-metrics.js";
import { OPERATOR_ACCESS } from "../../search/library-access.js";
import { withRecords } from "../with-volume.js";

/** `lds libraries metrics ID [--days N]`: a library's requests per day, top topics and MCP clients (operators see all). */
export async function run(argv: { id: string; days: number; dataDir?: string; json: boolean }): Promise<number> {
  return withRecords(argv.dataDir, async ({ store }) => {
    const metrics = await libraryMetrics(store, OPERATOR_ACCESS, argv.id, argv.days);
    if (argv.json) {
      process.stdout.write(JSON.stringify(metrics, null, 2) + "\n");
      return 0;
    }
    const out = [`${metrics.libraryId}: ${metrics.totalRequests} requests from ${metrics.from} to ${metrics.to} (a running server writes its counts every few seconds)`];
    for (const d of metrics.daily.filter((row) => row.total > 0)) out.push(`  ${d.date}  ${d.total}  (api ${d.api}, mcp ${d.mcp}, cli ${d.cli})`);
    if (metrics.topTopics.length) out.push(`  topics: ${metrics.topTopics.map((t) => `${t.topic} ${t.count}`).join(", ")}`);
    if (metrics.mcpClients.length) out.push(`  MCP clients: ${metrics.mcpClients.map((c) => `${c.name} ${c.count}`).join(", ")}`);
    process.stdout.write(out.join("\n") + "\n");
    return 0;
  });
}
