/**
 * Schema 14 on PostgreSQL: the job leases of lds.db's migration 14 (engine/sqlite/migrations.ts), the columns
 * appended in the same order so that a backup still copies `jobs` column for column; and, PostgreSQL only, the
 * snippets' vectors (float32 little-endian), canonical here because each replica derives its own search files from
 * them (issue 34, "Search"). lds.db keeps its vectors in vectors.db, so that table has no twin there.
 */
export const SCHEMA_14 = `
  ALTER TABLE jobs ADD COLUMN lease_owner text;
  ALTER TABLE jobs ADD COLUMN lease_until text;
  ALTER TABLE jobs ADD COLUMN attempts integer NOT NULL DEFAULT 0;
  CREATE TABLE snippet_vectors (
    snippet_id bigint PRIMARY KEY REFERENCES snippets(id) ON DELETE CASCADE,
    vector bytea NOT NULL
  );
`;
