// Where a command's time goes on PostgreSQL's side, measured from outside it (no failpoint, no change to the command):
// pg_stat_activity of one database sampled every SAMPLE_MS while the command runs, each sample labelled by what the
// other sessions on that database are doing. A COPY's session stays active while the client streams it, so "COPY"
// time includes the client's side of that copy (reading or writing lds.db).
import pg from "pg";

const SAMPLE_MS = 200;

/** The label of one sample: the first active statement of another session on `database`, by its first word. */
function labelOf(rows) {
  const active = rows.map((r) => r.query.trim().toUpperCase());
  if (active.some((q) => q.startsWith("COPY"))) return "COPY";
  if (active.some((q) => q.startsWith("ANALYZE"))) return "ANALYZE";
  if (active.length) return "other SQL";
  return "no statement";
}

/**
 * Sample `database` until `running` settles: answers { result, spans } where spans are the seconds from the start to
 * the first and after the last COPY sample and the seconds sampled per label.
 */
export async function sampleActivity(url, database, running) {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  const started = performance.now();
  const samples = [];
  let done = false;
  const finished = running.finally(() => (done = true));
  try {
    while (!done) {
      const { rows } = await client.query("SELECT query FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid() AND state = 'active'", [database]);
      samples.push({ at: (performance.now() - started) / 1000, label: labelOf(rows) });
      await Promise.race([new Promise((resolve) => setTimeout(resolve, SAMPLE_MS)), finished.catch(() => {})]);
    }
  } finally {
    await client.end();
  }
  const result = await finished;
  const copies = samples.filter((s) => s.label === "COPY");
  const perLabel = {};
  for (const s of samples) perLabel[s.label] = (perLabel[s.label] ?? 0) + SAMPLE_MS / 1000;
  return {
    result,
    spans: { firstCopyAt: copies[0]?.at ?? null, lastCopyAt: copies.at(-1)?.at ?? null, total: (performance.now() - started) / 1000, perLabel },
  };
}
