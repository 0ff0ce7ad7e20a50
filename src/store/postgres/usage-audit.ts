import type { AuditEntry, UsageCount } from "../records.js";
import type { AuditStore, UsageStore } from "../store.js";
import type { PgContext, Sql } from "./sql.js";

/**
 * Distinct names kept per library, day and dimension, as the SQLite engine caps them (store/sqlite/usage.ts): query
 * words and client names come from callers, so without a cap random words would add rows without bound.
 */
const DISTINCT_NAMES_PER_DAY: Record<UsageCount["dimension"], number> = { client: 10, topic: 50, mcpClient: 20 };

/** Names of the same library, day and dimension wait for one another here, so that two replicas cannot both pass the cap. */
const ADVISORY_USAGE = 0x4c445302;

export function usageStore({ sql, transaction }: PgContext): UsageStore {
  return {
    // Additive upserts in one transaction, in key order (replicas adding at once take row locks in the same order:
    // no deadlock). The cap is checked under a transaction-level advisory lock per (library, day, dimension).
    add: (counts) =>
      transaction(async (tx) => {
        const ordered = [...counts].sort((a, b) => compareKeys(keyOf(a), keyOf(b)));
        for (const c of ordered) {
          await tx.run("SELECT pg_advisory_xact_lock($1, hashtext($2))", [ADVISORY_USAGE, `${c.libraryId}\n${c.day}\n${c.dimension}`]);
          await tx.run(
            `INSERT INTO library_usage AS u (library_id, day, dimension, name, count)
               SELECT $1, $2, $3, $4, $5
               WHERE EXISTS (SELECT 1 FROM library_usage WHERE library_id = $1 AND day = $2 AND dimension = $3 AND name = $4)
                  OR (SELECT count(*) FROM library_usage WHERE library_id = $1 AND day = $2 AND dimension = $3) < $6
             ON CONFLICT (library_id, day, dimension, name) DO UPDATE SET count = u.count + excluded.count`,
            [c.libraryId, c.day, c.dimension, c.name, c.count, DISTINCT_NAMES_PER_DAY[c.dimension] ?? 0],
          );
        }
      }),
    read: (libraryId, fromDay) =>
      sql.rows<UsageCount>('SELECT library_id AS "libraryId", day, dimension, name, count FROM library_usage WHERE library_id = $1 AND day >= $2 ORDER BY day, dimension COLLATE "C", name COLLATE "C"', [
        libraryId,
        fromDay,
      ]),
    prune: (beforeDay) => sql.run("DELETE FROM library_usage WHERE day < $1", [beforeDay]),
  };
}

const keyOf = (c: UsageCount) => [c.libraryId, c.day, c.dimension, c.name];
const compareKeys = (a: string[], b: string[]) => {
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return a[i]! < b[i]! ? -1 : 1;
  return 0;
};

/** Record an operator action that changes what clients are served. Never holds secrets. */
export async function recordAudit(sql: Sql, entry: Omit<AuditEntry, "at">): Promise<void> {
  await sql.run("INSERT INTO audit_log (actor, action, subject, details) VALUES ($1, $2, $3, $4)", [entry.actor, entry.action, entry.subject, JSON.stringify(entry.details)]);
}

export function auditStore({ sql }: PgContext): AuditStore {
  return {
    record: (entry) => recordAudit(sql, entry),
    list: async (limit = 100) => {
      const rows = await sql.rows<Omit<AuditEntry, "details"> & { details: string }>("SELECT at, actor, action, subject, details FROM audit_log ORDER BY id DESC LIMIT $1", [limit]);
      return rows.map((r) => ({ ...r, details: JSON.parse(r.details) as Record<string, unknown> }));
    },
  };
}
