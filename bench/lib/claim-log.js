// Every claim of a job, recorded by the database itself (bench only): a trigger on the records' `jobs` table adds a
// row to bench.claims each time a job becomes running or changes holder (a reclaim), and one when it ends, at the
// database's clock, the same clock as the job's created_at. A job claimed twice shows as two running rows: what
// "duplicates" counts.
import pg from "pg";

/** Install the trigger in `url`'s database (after the schema exists, before the replicas claim anything). */
export async function recordClaims(url) {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const { rows } = await client.query("SELECT schemaname FROM pg_tables WHERE tablename = 'jobs'");
    if (rows.length !== 1) throw new Error(`expected one jobs table, found ${rows.length}`);
    const jobs = `${rows[0].schemaname}.jobs`;
    await client.query(`
      CREATE SCHEMA bench;
      CREATE TABLE bench.claims (job_id bigint NOT NULL, state text NOT NULL, owner text, at timestamptz NOT NULL DEFAULT clock_timestamp());
      CREATE FUNCTION bench.claimed() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN INSERT INTO bench.claims (job_id, state, owner) VALUES (NEW.id, NEW.state, NEW.lease_owner); RETURN NEW; END $$;
      CREATE TRIGGER bench_claimed AFTER UPDATE ON ${jobs} FOR EACH ROW
        WHEN ((NEW.state = 'running' AND (OLD.state IS DISTINCT FROM 'running' OR OLD.lease_owner IS DISTINCT FROM NEW.lease_owner))
          OR (NEW.state IN ('done', 'failed') AND OLD.state IS DISTINCT FROM NEW.state))
        EXECUTE FUNCTION bench.claimed();`);
    return jobs;
  } finally {
    await client.end();
  }
}

/** The states of the jobs after `afterId`, their claims and each one's wait from queued to its first claim (ms, sorted). */
export async function claimReport(url, jobs, afterId) {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const states = Object.fromEntries((await client.query(`SELECT state, count(*)::int AS n FROM ${jobs} WHERE id > $1 GROUP BY state`, [afterId])).rows.map((r) => [r.state, r.n]));
    const perJob = (
      await client.query(
        `SELECT j.id, count(c.job_id) FILTER (WHERE c.state = 'running')::int AS claims, max(j.attempts) AS attempts,
          extract(epoch FROM min(c.at) FILTER (WHERE c.state = 'running') - j.created_at::timestamptz) * 1000 AS wait_ms,
          extract(epoch FROM max(c.at) FILTER (WHERE c.state <> 'running') - min(c.at) FILTER (WHERE c.state = 'running')) * 1000 AS run_ms
        FROM ${jobs} j LEFT JOIN bench.claims c ON c.job_id = j.id WHERE j.id > $1 GROUP BY j.id, j.created_at`,
        [afterId],
      )
    ).rows;
    // A runner claims its next job as soon as one of its jobs ends (while any is queued): the time from that runner's
    // latest end to each claim is what claiming costs under the other replica's competition, queue depth aside.
    const pickUps = (
      await client.query(
        `SELECT extract(epoch FROM c.at - e.at) * 1000 AS ms FROM bench.claims c
           CROSS JOIN LATERAL (SELECT max(at) AS at FROM bench.claims WHERE owner = c.owner AND state <> 'running' AND at <= c.at) e
         WHERE c.state = 'running' AND c.job_id > $1 AND e.at IS NOT NULL`,
        [afterId],
      )
    ).rows;
    const owners = (await client.query("SELECT owner, count(*)::int AS n FROM bench.claims WHERE state = 'running' GROUP BY owner ORDER BY owner")).rows;
    return {
      states,
      jobs: perJob.length,
      claims: perJob.reduce((s, r) => s + r.claims, 0),
      claimedTwice: perJob.filter((r) => r.claims > 1).length,
      maxAttempts: Math.max(...perJob.map((r) => r.attempts)),
      waits: perJob
        .filter((r) => r.wait_ms !== null)
        .map((r) => Number(r.wait_ms))
        .sort((a, b) => a - b),
      pickUps: pickUps.map((r) => Number(r.ms)).sort((a, b) => a - b),
      runs: perJob
        .filter((r) => r.run_ms !== null)
        .map((r) => Number(r.run_ms))
        .sort((a, b) => a - b),
      owners,
    };
  } finally {
    await client.end();
  }
}

/** The largest job id so far (0: none). */
export async function lastJobId(url, jobs) {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return Number((await client.query(`SELECT coalesce(max(id), 0) AS id FROM ${jobs}`)).rows[0].id);
  } finally {
    await client.end();
  }
}

/** Resolves once no job is queued or running. */
export async function jobsSettled(url, jobs) {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    for (;;) {
      const { rows } = await client.query(`SELECT count(*)::int AS n FROM ${jobs} WHERE state IN ('queued', 'running')`);
      if (rows[0].n === 0) return;
      await new Promise((r) => setTimeout(r, 200));
    }
  } finally {
    await client.end();
  }
}
