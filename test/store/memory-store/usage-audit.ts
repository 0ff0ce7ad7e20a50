import type { AuditEntry, UsageCount } from "../../../src/store/records.js";
import type { AuditStore, UsageStore } from "../../../src/store/store.js";
import { copy, now, type MemoryTables } from "./tables.js";

/**
 * Distinct names kept per library, day and dimension: the cap the SQLite engine states in store/usage.ts (names come
 * from callers, so without it random words would add records without bound). Repeated here rather than imported
 * from the SQLite engine's module; it belongs in store/record-values.ts.
 */
const DISTINCT_NAMES_PER_DAY: Record<UsageCount["dimension"], number> = { client: 10, topic: 50, mcpClient: 20 };

export function usageStore(tables: MemoryTables): UsageStore {
  return {
    add: async (counts) => {
      for (const c of counts) {
        const key = `${c.libraryId} ${c.day} ${c.dimension} ${c.name}`;
        const stored = tables.usage.get(key);
        if (stored) {
          stored.count += c.count;
          continue;
        }
        // Past the cap a new name is not kept; names already kept go on counting.
        const names = [...tables.usage.values()].filter((u) => u.libraryId === c.libraryId && u.day === c.day && u.dimension === c.dimension).length;
        if (names < (DISTINCT_NAMES_PER_DAY[c.dimension] ?? 0)) tables.usage.set(key, { ...c });
      }
    },
    read: async (libraryId, fromDay) =>
      [...tables.usage.values()]
        .filter((u) => u.libraryId === libraryId && u.day >= fromDay)
        .sort((a, b) => (a.day < b.day ? -1 : a.day > b.day ? 1 : 0))
        .map((u) => ({ ...u })),
    prune: async (beforeDay) => {
      let pruned = 0;
      for (const [key, u] of tables.usage) if (u.day < beforeDay && tables.usage.delete(key)) pruned++;
      return pruned;
    },
  };
}

export function recordAudit(tables: MemoryTables, entry: Omit<AuditEntry, "at">): void {
  tables.audit.push({ at: now(), ...copy(entry) });
}

export function auditStore(tables: MemoryTables): AuditStore {
  return {
    record: async (entry) => recordAudit(tables, entry),
    list: async (limit = 100) => tables.audit.slice(-limit).reverse().map(copy),
  };
}
