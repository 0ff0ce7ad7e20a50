import { LdsError } from "../../errors.js";
import { action, setting } from "../../hints.js";
import type { EngineWork } from "../engine.js";

/** What each kind of work needs, and what to use instead while the PostgreSQL engine lacks it (issue 34). */
const NOT_YET: Record<EngineWork, { needs: string; instead: string }> = {
  search: {
    needs: "the search index, which on PostgreSQL only a serving replica keeps (its files, followed from the records)",
    instead: `On PostgreSQL search, ask for context and submit repositories through a serving replica's HTTP API (lds serve); the commands that need only the records work (lds init, teams, users, keys, admin create, libraries list, libraries metrics, libraries move, audit, connections), and so does lds ingest git (docs/postgresql.md).`,
  },
  ingestion: {
    needs: "a library's snippets written into the records, which only lds ingest git does from the command line",
    instead: `Ingest from the command line with lds ingest git, or submit repositories through a serving replica's HTTP API (lds serve) (docs/postgresql.md).`,
  },
  snapshot: {
    needs: "backups run by the servers themselves, which replicas must agree on (one scheduled slot for all of them)",
    instead: 'Back the database up from the command line meanwhile, from one host, to a destination every replica shares (docs/postgresql.md, "What works on PostgreSQL").',
  },
  restore: {
    needs: "an archive restored into the records",
    instead: `Restore into PostgreSQL from the command line while no replica serves (${action("restore.intoDatabase")}).`,
  },
  keyRotation: {
    needs: "the secrets re-sealed with a new key that every replica then shares",
    instead: `Rotate the key from the command line while no replica serves, then copy ${setting("secretKeyFile")} to every replica.`,
  },
};

/**
 * The commands that can do each kind of work on PostgreSQL already. Search: the server alone, which keeps the
 * replica's search files under its data directory's lock (a command beside it would follow the records into the same
 * files: two writers), so search, context and index rebuilds stay refused on the command line. An ingestion from the
 * command line needs no search files: its batches go into the records, which every serving replica follows (it holds
 * the serving lock shared meanwhile, as a replica does, so that no restore or key rotation runs under it). A restore
 * and a key rotation: the command line's, while no replica serves (never a server's, which is a replica).
 */
const DOABLE: Partial<Record<EngineWork, ReadonlySet<string>>> = {
  search: new Set(["lds serve"]),
  ingestion: new Set(["lds ingest git"]),
  // A command-line backup (lds backup, cron's lds-backup) takes the backups' advisory lock in the database; a server's
  // own backups do not ask: its runner takes the same lock, and one replica claims each scheduled firing.
  snapshot: new Set(["lds backup"]),
  restore: new Set(["lds restore"]),
  keyRotation: new Set(["lds secrets rotate-key"]),
};

/** The refusal of `command` on PostgreSQL, or undefined when it can do `work` there. */
export function notYetOnPostgres(work: EngineWork, command: string): LdsError | undefined {
  if (DOABLE[work]?.has(command)) return undefined;
  return refusalOnPostgres(work, command);
}

/** What PostgreSQL's engine cannot do yet, refused with this error. */
export function refusalOnPostgres(work: EngineWork, command: string): LdsError {
  const { needs, instead } = NOT_YET[work];
  return new LdsError("engine_unsupported", `\`${command}\` is not available on PostgreSQL yet: it needs ${needs}.`, { hint: instead });
}
