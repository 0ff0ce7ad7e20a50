import type { Logger } from "pino";
import { describeFailure } from "../errors.js";
import { queryTerms } from "../index/query-terms.js";
import type { Store } from "../store/store.js";
import type { UsageCount } from "../store/records.js";

/** Where a request came from, by the clients' own headers (X-Context7-Source) or the endpoint. */
export type ClientKind = "api" | "mcp" | "cli";

export interface UsageEvent {
  libraryId: string;
  client: ClientKind;
  query: string;
  /** The MCP client's name, when the request came through MCP and says it. */
  mcpClient?: string;
}

export interface UsageRecorder {
  /** Count one answered request; never waits and never fails the request. */
  record(event: UsageEvent): void;
  /** Write what is buffered now (tests, shutdown). */
  flush(): Promise<void>;
  close(): Promise<void>;
}

/** Topic words kept per request: the first meaningful words of the query. */
const TOPICS_PER_REQUEST = 8;
const KEEP_DAYS = 365;
const DAY_MS = 86_400_000;

/**
 * Usage metrics without slowing requests: counters are added up in memory and written in one transaction every
 * `flushMs` (and at shutdown); days older than a year are forgotten once a day. A crash loses at most the last
 * interval's counts, which are statistics, never data.
 */
export function createUsageRecorder(store: Store, logger: Logger, flushMs = 5_000): UsageRecorder {
  let pending = new Map<string, UsageCount>();
  let lastPrune = 0;
  let writing: Promise<void> = Promise.resolve();

  const count = (c: Omit<UsageCount, "count">) => {
    const key = `${c.libraryId}\0${c.day}\0${c.dimension}\0${c.name}`;
    const existing = pending.get(key);
    if (existing) existing.count++;
    else pending.set(key, { ...c, count: 1 });
  };

  const write = async () => {
    const batch = [...pending.values()];
    pending = new Map();
    try {
      if (batch.length) await store.usage.add(batch);
      if (Date.now() - lastPrune > DAY_MS) {
        lastPrune = Date.now();
        await store.usage.prune(day(Date.now() - KEEP_DAYS * DAY_MS));
      }
    } catch (err) {
      logger.warn({ err: describeFailure(err), counters: batch.length }, "usage metrics not written; they are statistics, requests are unaffected");
    }
  };
  const flush = () => (writing = writing.then(write));
  const timer = setInterval(() => void flush(), flushMs);
  timer.unref();

  return {
    record(event) {
      const today = day(Date.now());
      const base = { libraryId: event.libraryId, day: today };
      count({ ...base, dimension: "client", name: event.client });
      for (const topic of queryTerms(event.query).slice(0, TOPICS_PER_REQUEST)) count({ ...base, dimension: "topic", name: topic.slice(0, 64) });
      if (event.client === "mcp") count({ ...base, dimension: "mcpClient", name: (event.mcpClient || "unknown").slice(0, 64) });
    },
    flush,
    async close() {
      clearInterval(timer);
      await flush();
    },
  };
}

/** A UTC day as YYYY-MM-DD. */
export function day(ms: number): string {
  return new Date(ms).toISOString().slice(0, 10);
}
