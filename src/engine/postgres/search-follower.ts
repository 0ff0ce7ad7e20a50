import type pg from "pg";
import { LdsError } from "../../errors.js";
import { endpointOf } from "../../store/postgres/pool.js";
import type { MirrorBatch, SearchMirrorFiles } from "../sqlite/search-mirror-files.js";
import { listenForBatches, type BatchListener } from "./batch-listener.js";
import { batchRows, liveBatch, liveBatches } from "./live-batches.js";

/**
 * Keeps a replica's search files (engine/sqlite/search-mirror-files.ts) on PostgreSQL's live batches: a catch-up at
 * start (every live batch missing here fetched, one at a time, in chunks; every batch here no longer live dropped),
 * again on each `lds_batches` notice, after the listening connection comes back, and every `pollMs` for whatever a
 * notice did not say. A request that needs a live batch not held yet fetches it first (`ensureLive`), so a replica
 * never answers from an older batch.
 */
export interface SearchFollower {
  /** Bring the files to PostgreSQL's live batches now; rejects as the database does (database_unreachable). */
  catchUp(): Promise<void>;
  /**
   * Before a request ranks a library version's batch `batch` (its live batch, as the records just said): fetch it
   * when it is not held here. Callers of one batch share one fetch. Past `ensureTimeoutMs`, a `timeout` LdsError
   * (the fetch goes on). Resolves at once when the batch is held, and when it is no longer live (the request's view
   * is already older than the files').
   */
  ensureLive(libraryId: string, version: string, batch: number): Promise<void>;
  /** For /api/health: live batches not held here, the time since the oldest was first seen missing, and the listener. */
  lag(): FollowerLag;
  close(): Promise<void>;
}

export interface FollowerLag {
  batches: number;
  oldestMs: number | null;
  listening: boolean;
  /** False until the first catch-up ended, and again from a dropped listening connection to the next catch-up (for /api/ready). */
  caughtUp: boolean;
}

export interface FollowerOptions {
  pool: pg.Pool;
  /** The database's URL, for the listening connection of its own. */
  url: string;
  /** @default 5000 */
  pollMs?: number;
  /** @default 10000 */
  ensureTimeoutMs?: number;
  /** @default 5000 */
  connectTimeoutMs?: number;
  /** A catch-up in the background failed (the next notice or poll tries again). */
  onError?: (err: unknown) => void;
}

const keyOf = (libraryId: string, version: string, batch: number) => JSON.stringify([libraryId, version, batch]);
const versionOf = (b: { libraryId: string; version: string }) => JSON.stringify([b.libraryId, b.version]);

/** Start following: listening and polling at once; the first catch-up is the caller's (`catchUp`). */
export function followBatches(mirror: SearchMirrorFiles, options: FollowerOptions): SearchFollower {
  const { pool } = options;
  const endpoint = endpointOf(options.url);
  let held = new Map<string, MirrorBatch>();
  const refreshHeld = () => (held = new Map(mirror.held().map((b) => [keyOf(b.libraryId, b.version, b.batch), b])));
  refreshHeld();
  const missingSince = new Map<string, number>();
  const fetching = new Map<string, Promise<void>>();
  const versionTurns = new Map<string, Promise<unknown>>();
  let caughtUp = false;
  let closed = false;
  // Ends the steps of drops under way when the follower closes: what is left is dropped at the next open.
  const closing = new AbortController();

  /** One change of a library version's files at a time: a fetch checks the batch is live, then holds it, unbroken. */
  function inTurn<T>(version: string, work: () => Promise<T>): Promise<T> {
    const turn = (versionTurns.get(version) ?? Promise.resolve()).catch(() => {}).then(work);
    versionTurns.set(version, turn);
    void turn.finally(() => versionTurns.get(version) === turn && versionTurns.delete(version)).catch(() => {});
    return turn;
  }

  /** Copy a batch that is live into the files and hold it; a batch no longer live when copied is dropped instead. */
  async function copyBatch(libraryId: string, version: string, batch: number): Promise<void> {
    const live = await liveBatch(pool, endpoint, libraryId, version, batch);
    if (!live || held.get(keyOf(libraryId, version, batch))?.startedAt === live.startedAt) return;
    await mirror.begin(live);
    try {
      for await (const rows of batchRows(pool, endpoint, live)) {
        if (closed) throw new Error("the search follower was closed");
        await mirror.add(live, rows);
      }
      // Rows are deleted only once their batch is retired: still live now, it was whole while it was read.
      const still = await liveBatch(pool, endpoint, libraryId, version, batch);
      if (still?.startedAt !== live.startedAt) return await mirror.drop(live);
      const replaced = mirror.hold(live);
      refreshHeld();
      // Not awaited: the callers waiting for this batch are answered now; the replaced one goes next in this turn.
      if (replaced) dropLater(replaced);
    } catch (err) {
      if (!closed) await mirror.drop(live).catch(() => {});
      throw err;
    } finally {
      if (!closed) refreshHeld();
    }
  }

  const drops = new Set<Promise<void>>();
  function dropLater(batch: MirrorBatch): void {
    const dropping = inTurn(versionOf(batch), () => mirror.drop(batch, closing.signal)).catch((err: unknown) => options.onError?.(err));
    drops.add(dropping);
    void dropping.finally(() => drops.delete(dropping));
  }

  function fetchBatch(libraryId: string, version: string, batch: number): Promise<void> {
    const key = keyOf(libraryId, version, batch);
    let running = fetching.get(key);
    if (!running) {
      running = inTurn(versionOf({ libraryId, version }), () => copyBatch(libraryId, version, batch)).finally(() => fetching.delete(key));
      fetching.set(key, running);
    }
    return running;
  }

  async function sync(): Promise<void> {
    // Held before the live batches are read: one of these missing from them was retired before, and stays so. (One
    // held later, by ensureLive, may have been published after the read: it is not dropped.)
    const heldBefore = [...held.values()];
    const live = await liveBatches(pool, endpoint);
    const liveKeys = new Set(live.map((b) => keyOf(b.libraryId, b.version, b.batch) + b.startedAt));
    const missing = live.filter((b) => held.get(keyOf(b.libraryId, b.version, b.batch))?.startedAt !== b.startedAt);
    const now = Date.now();
    const missingKeys = new Set(missing.map((b) => keyOf(b.libraryId, b.version, b.batch)));
    for (const key of missingSince.keys()) if (!missingKeys.has(key)) missingSince.delete(key);
    for (const key of missingKeys) if (!missingSince.has(key)) missingSince.set(key, now);
    // Newer batches first (holding one retires the batch it replaces, dropped after), then what is no longer live.
    // A batch that fails to copy does not hold up the others: the first failure is reported once all were tried.
    let failed: { err: unknown } | undefined;
    for (const b of missing) {
      if (!closed) await fetchBatch(b.libraryId, b.version, b.batch).catch((err: unknown) => (failed ??= { err }));
    }
    for (const b of heldBefore) {
      if (closed || liveKeys.has(keyOf(b.libraryId, b.version, b.batch) + b.startedAt)) continue;
      await inTurn(versionOf(b), async () => {
        if (held.get(keyOf(b.libraryId, b.version, b.batch))?.startedAt !== b.startedAt) return;
        await mirror.drop(b, closing.signal);
        refreshHeld();
      });
    }
    if (failed) throw failed.err;
  }

  // Catch-ups run one at a time; one asked for meanwhile runs once more after (notices come in bursts).
  let running: Promise<void> | undefined;
  let again = false;
  function catchUp(): Promise<void> {
    if (running) {
      again = true;
      return running;
    }
    running = (async () => {
      try {
        do {
          again = false;
          await sync();
          // Caught up with the moment this catch-up began: notices that came meanwhile (jobs publishing) ask for
          // another round, which must not keep a replica from being ready.
          caughtUp = true;
        } while (again && !closed);
      } finally {
        running = undefined;
      }
    })();
    return running;
  }
  const catchUpQuietly = () => {
    if (!closed) catchUp().catch((err: unknown) => options.onError?.(err));
  };

  const listener: BatchListener = listenForBatches({
    url: options.url,
    connectTimeoutMs: options.connectTimeoutMs ?? 5_000,
    onNotice: catchUpQuietly,
    onConnected: catchUpQuietly,
    // Publications while the connection is down go unnoticed (a database restart): not caught up (/api/ready is
    // 503) until the catch-up that follows the reconnection, or a poll, has ended.
    onDropped: () => (caughtUp = false),
  });
  const poll = setInterval(catchUpQuietly, options.pollMs ?? 5_000);
  poll.unref();

  return {
    catchUp,
    async ensureLive(libraryId, version, batch) {
      if (held.has(keyOf(libraryId, version, batch))) return;
      const bound = options.ensureTimeoutMs ?? 10_000;
      let timer: NodeJS.Timeout | undefined;
      const late = new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(ensureTimedOut(libraryId, version, bound)), bound);
      });
      try {
        await Promise.race([fetchBatch(libraryId, version, batch), late]);
      } finally {
        clearTimeout(timer);
      }
    },
    lag() {
      const waiting = [...missingSince].filter(([key]) => !held.has(key)).map(([, since]) => since);
      return { batches: waiting.length, oldestMs: waiting.length ? Date.now() - Math.min(...waiting) : null, listening: listener.listening, caughtUp };
    },
    async close() {
      closed = true;
      closing.abort();
      clearInterval(poll);
      await listener.close();
      await Promise.allSettled([running, ...fetching.values()]);
      await Promise.allSettled([...drops]);
    },
  };
}

function ensureTimedOut(libraryId: string, version: string, ms: number): LdsError {
  const name = version ? `${libraryId} (version ${version})` : libraryId;
  return new LdsError("timeout", `This replica's search files do not have the current snippets of ${name} yet, and fetching them took longer than ${ms} ms.`, {
    hint: "Try again in a moment: the fetch goes on. If it keeps happening, check this replica's health report (its search lag) and its connection to PostgreSQL.",
  });
}
