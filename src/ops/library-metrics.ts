import { LdsError } from "../errors.js";
import { accessDenied, type LibraryAccess } from "../search/library-access.js";
import { findVisibleExactly } from "../search/visible-library.js";
import type { Store } from "../store/store.js";
import { day, type ClientKind } from "./usage-recorder.js";

export interface LibraryMetrics {
  libraryId: string;
  days: number;
  from: string;
  to: string;
  totalRequests: number;
  /** One row per day, oldest first, zeros included. */
  daily: Array<{ date: string; total: number } & Record<ClientKind, number>>;
  topTopics: Array<{ topic: string; count: number }>;
  mcpClients: Array<{ name: string; count: number }>;
}

const TOP = 10;

/**
 * Requests per day for one library over the last `days` days (GET /v2/libs/metrics, `lds libraries metrics`), by
 * client kind, with its most asked-about topic words and MCP clients. Only readers who may see the library get
 * them: another team's private library does not exist for a caller (404), so its queries are never shown; one its
 * team's access policy does not allow is refused (403 access_denied), as its context is.
 */
export async function libraryMetrics(store: Store, access: LibraryAccess, libraryId: string, days: number, now = Date.now()): Promise<LibraryMetrics> {
  if (!Number.isInteger(days) || days < 1 || days > 365) throw new LdsError("validation_error", "days must be a whole number from 1 to 365.");
  const library = await findVisibleExactly(store, access, libraryId);
  if (!access.mayUse(library)) throw accessDenied(libraryId);
  const dates = Array.from({ length: days }, (_, i) => day(now - (days - 1 - i) * 86_400_000));
  const rows = await store.usage.read(library.id, dates[0]!);
  const daily = dates.map((date) => ({ date, total: 0, api: 0, mcp: 0, cli: 0 }));
  const byDate = new Map(daily.map((d) => [d.date, d]));
  const topics = new Map<string, number>();
  const clients = new Map<string, number>();
  for (const row of rows) {
    if (row.dimension !== "client") {
      const counts = row.dimension === "topic" ? topics : clients;
      counts.set(row.name, (counts.get(row.name) ?? 0) + row.count);
      continue;
    }
    const entry = byDate.get(row.day);
    if (entry && (row.name === "api" || row.name === "mcp" || row.name === "cli")) {
      entry[row.name] += row.count;
      entry.total += row.count;
    }
  }
  const top = (counts: Map<string, number>) => [...counts.entries()].sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0])).slice(0, TOP);
  return {
    libraryId: library.id,
    days,
    from: dates[0]!,
    to: dates[dates.length - 1]!,
    totalRequests: daily.reduce((sum, d) => sum + d.total, 0),
    daily,
    topTopics: top(topics).map(([topic, count]) => ({ topic, count })),
    mcpClients: top(clients).map(([name, count]) => ({ name, count })),
  };
}
