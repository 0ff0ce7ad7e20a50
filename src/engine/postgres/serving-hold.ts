import os from "node:os";
import pg from "pg";
import { translateError } from "../../store/postgres/pool.js";
import { endpointOfPool } from "./copy-connection.js";
import { SERVING_LOCK } from "./serving-lock.js";

/** How long a replica waits before it takes the lock again on a new connection, once its connection was lost. */
const RETRY_MS = 1_000;

/** What a rotation or a restore's swap changes: the recorded key fingerprint, and the live schema (a swap renames). */
export interface ServingMarker {
  fingerprint: string | null;
  schema: string | null;
}

export interface ServingHold {
  /**
   * After each retake (the lock was lost with its connection, so a rotation or a restore may have run meanwhile): the
   * marker read again under the lock and compared with `opened`; on a change, `onChanged` (once).
   */
  watch(opened: ServingMarker, onChanged: () => void): void;
  /**
   * Also hold the two-key advisory lock (`key`, hashtext(`text`)) shared on the same connection until it closes. Not
   * taken again after a lost connection: what it guards is then refused by the records themselves.
   */
  holdAlso(key: number, text: string): Promise<void>;
  close(): Promise<void>;
}

const MARKER_SQL = `SELECT to_regnamespace(current_schema())::oid::text AS schema,
  (SELECT value FROM settings WHERE key = 'secret_key.fingerprint') AS fingerprint`;

/** The marker as `sql` sees it now. */
export async function readServingMarker(query: (text: string) => Promise<{ rows: ServingMarker[] }>): Promise<ServingMarker> {
  const row = (await query(MARKER_SQL)).rows[0];
  return { fingerprint: row?.fingerprint ?? null, schema: row?.schema ?? null };
}

/**
 * A serving replica's share of SERVING_LOCK, on a connection of its own for as long as it serves, so that a restore
 * or a key rotation (which take it exclusively) refuses to run under it. The connection is named after the replica
 * (`command`, host and pid: what those refusals name); a command that writes the records beside the replicas (an
 * ingestion) holds it the same way, under its own name. A lost connection (a database restart) loses the lock: it is
 * taken again on a new one, in the background, until the holder closes.
 */
export async function holdServingLock(pool: pg.Pool, onError: (err: unknown) => void, command = "lds serve"): Promise<ServingHold> {
  const name = `${command} on ${os.hostname()} pid ${process.pid}`.slice(0, 63);
  let closed = false;
  let client: pg.Client | undefined;
  let retry: NodeJS.Timeout | undefined;
  let watched: { opened: ServingMarker; onChanged: () => void; told: boolean } | undefined;
  const schedule = () => {
    if (!closed) retry = setTimeout(() => void takeAgain(), RETRY_MS);
  };
  const take = async () => {
    const next = new pg.Client({ ...(pool.options as pg.ClientConfig), application_name: name, statement_timeout: 0, query_timeout: 0, keepAlive: true });
    next.on("error", () => {});
    try {
      await next.connect();
      await next.query("SELECT pg_advisory_lock_shared($1)", [SERVING_LOCK]);
    } catch (err) {
      await next.end().catch(() => {});
      throw translateError(err, endpointOfPool(pool));
    }
    if (closed) {
      await next.end().catch(() => {});
      return;
    }
    client = next;
    // The held connection lost (the server restarted or cut it): the lock went with it, taken again on a new one.
    next.on("end", () => {
      if (client !== next) return;
      client = undefined;
      schedule();
    });
  };
  const takeAgain = async () => {
    if (closed) return;
    try {
      await take();
    } catch (err) {
      onError(err);
      schedule();
      return;
    }
    await recheck();
  };
  // Under the retaken lock: whatever ran in the gap has committed, and nothing changes the marker while it is held.
  const recheck = async () => {
    const held = client;
    if (!watched || watched.told || !held) return;
    try {
      const now = await readServingMarker((text) => held.query<ServingMarker>(text));
      if (now.fingerprint === watched.opened.fingerprint && now.schema === watched.opened.schema) return;
      watched.told = true;
      watched.onChanged();
    } catch (err) {
      // Not known: the connection is ended, and the lock taken and checked again on a new one.
      onError(err);
      await held.end().catch(() => {});
    }
  };
  await take();
  return {
    watch(opened, onChanged) {
      watched = { opened, onChanged, told: false };
    },
    async holdAlso(key, text) {
      const held = client;
      if (!held) throw translateError(Object.assign(new Error("Connection terminated"), { code: "ECONNRESET" }), endpointOfPool(pool));
      try {
        await held.query("SELECT pg_advisory_lock_shared($1, hashtext($2))", [key, text]);
      } catch (err) {
        throw translateError(err, endpointOfPool(pool));
      }
    },
    async close() {
      closed = true;
      clearTimeout(retry);
      const held = client;
      client = undefined;
      await held?.end().catch(() => {});
    },
  };
}
