import pg from "pg";
import { BATCH_CHANNEL } from "../../store/postgres/batch-notices.js";

/**
 * `LISTEN lds_batches` on a connection of its own (a pooled connection goes back to the pool, and its LISTEN with
 * it), kept up: when the connection drops (a database restart, pg_terminate_backend, a network cut) it connects
 * again with backoff (100 ms doubling to 2 s: a replica is not ready meanwhile) and says so through `onConnected`, since notices sent meanwhile were
 * lost and the follower must catch up. `onNotice` gets every notice; what it says is read again from the tables.
 */
export interface BatchListener {
  /** Whether the connection is up and listening now. */
  readonly listening: boolean;
  close(): Promise<void>;
}

export interface ListenerOptions {
  url: string;
  connectTimeoutMs: number;
  onNotice: () => void;
  /** After each (re)connection, LISTEN in place. */
  onConnected: () => void;
  /** The connection dropped: notices are lost until the next `onConnected`. */
  onDropped?: () => void;
}

const FIRST_RETRY_MS = 100;
const LAST_RETRY_MS = 2_000;

/** Starts listening; a first connection that fails is retried like a dropped one (the poll covers the gap). */
export function listenForBatches(options: ListenerOptions): BatchListener {
  let client: pg.Client | undefined;
  let listening = false;
  let closed = false;
  let retryMs = FIRST_RETRY_MS;
  let timer: NodeJS.Timeout | undefined;

  const retry = () => {
    listening = false;
    if (closed || timer) return;
    timer = setTimeout(() => {
      timer = undefined;
      void connect();
    }, retryMs);
    retryMs = Math.min(retryMs * 2, LAST_RETRY_MS);
  };

  async function connect(): Promise<void> {
    const next = new pg.Client({ connectionString: options.url, connectionTimeoutMillis: options.connectTimeoutMs, keepAlive: true });
    client = next;
    let dropped = false;
    const drop = () => {
      if (dropped) return;
      dropped = true;
      void next.end().catch(() => {});
      if (client === next) {
        if (listening) options.onDropped?.();
        retry();
      }
    };
    // A dropped connection emits "error" (and then "end"): unhandled, "error" would end the process.
    next.on("error", drop);
    next.on("end", drop);
    next.on("notification", (message) => {
      if (message.channel === BATCH_CHANNEL) options.onNotice();
    });
    try {
      await next.connect();
      await next.query(`LISTEN ${BATCH_CHANNEL}`);
    } catch {
      drop();
      return;
    }
    if (closed || dropped) return void next.end().catch(() => {});
    listening = true;
    retryMs = FIRST_RETRY_MS;
    options.onConnected();
  }

  void connect();
  return {
    get listening() {
      return listening;
    },
    async close() {
      closed = true;
      listening = false;
      clearTimeout(timer);
      const last = client;
      client = undefined;
      await last?.end().catch(() => {});
    },
  };
}
