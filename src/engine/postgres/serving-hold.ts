import os from "node:os";
import pg from "pg";
import { translateError } from "../../store/postgres/pool.js";
import { endpointOfPool } from "./copy-connection.js";
import { SERVING_LOCK } from "./serving-lock.js";

/** How long a replica waits before it takes the lock again on a new connection, once its connection was lost. */
const RETRY_MS = 1_000;

export interface ServingHold {
  close(): Promise<void>;
}

/**
 * A serving replica's share of SERVING_LOCK, on a connection of its own for as long as it serves, so that a restore
 * or a key rotation (which take it exclusively) refuses to run under it. The connection is named after the replica
 * (host and pid: what those refusals name). A lost connection (a database restart) loses the lock: it is taken
 * again on a new one, in the background, until the replica closes.
 */
export async function holdServingLock(pool: pg.Pool, onError: (err: unknown) => void): Promise<ServingHold> {
  const name = `lds serve on ${os.hostname()} pid ${process.pid}`.slice(0, 63);
  let closed = false;
  let client: pg.Client | undefined;
  let retry: NodeJS.Timeout | undefined;
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
    }
  };
  await take();
  return {
    async close() {
      closed = true;
      clearTimeout(retry);
      const held = client;
      client = undefined;
      await held?.end().catch(() => {});
    },
  };
}
