import { LdsError } from "../../errors.js";
import { setting } from "../../hints.js";
import type { EngineWork } from "../engine.js";

/** What each kind of work needs, and what to use instead while the PostgreSQL engine lacks it (issue 34). */
const NOT_YET: Record<EngineWork, { needs: string; instead: string }> = {
  search: {
    needs: "the search index, which each replica will keep from the records (issue 34)",
    instead: `On PostgreSQL use the commands that need only the records (lds init, teams, users, keys, admin create, libraries list, libraries metrics, libraries move, audit, connections); serve, search, context, ingest and rebuild the index with the records in SQLite (unset ${setting("databaseUrl")}) meanwhile (docs/postgresql.md).`,
  },
  snapshot: {
    needs: "a snapshot of the records into an archive",
    instead: 'Back the database up with pg_dump meanwhile (docs/postgresql.md, "What works on PostgreSQL").',
  },
  restore: {
    needs: "an archive restored into the records",
    instead: `Restore into a SQLite data volume (unset ${setting("databaseUrl")}); restoring into PostgreSQL comes with issue 34.`,
  },
  keyRotation: {
    needs: "the secrets re-sealed with a new key that every replica then shares",
    instead: `Keep ${setting("secretKeyFile")} as it is meanwhile; key rotation on PostgreSQL comes with issue 34.`,
  },
};

/** PostgreSQL's engine does the records only so far: every other kind of work is refused with this error. */
export function notYetOnPostgres(work: EngineWork, command: string): LdsError {
  const { needs, instead } = NOT_YET[work];
  return new LdsError("engine_unsupported", `\`${command}\` is not available on PostgreSQL yet: it needs ${needs}.`, { hint: instead });
}
