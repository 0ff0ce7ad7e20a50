import type { RequestWindow, RequestWindowStore } from "./store.js";

/**
 * Request windows kept in this process's memory: for an engine whose records one process serves (a SQLite volume
 * has one server; commands do not limit requests), where a shared table would only add a write to every request.
 * Windows that ended are swept once per window length, so that the map holds only live keys.
 */
export function requestWindowsInMemory(now: () => number = Date.now): RequestWindowStore {
  const windows = new Map<string, { start: number; count: number; windowMs: number }>();
  let swept = now();
  return {
    async charge(key, windowMs, amount, ceiling): Promise<RequestWindow> {
      const at = now();
      if (at - swept > windowMs) {
        for (const [k, w] of windows) if (at - w.start >= w.windowMs) windows.delete(k);
        swept = at;
      }
      let window = windows.get(key);
      if (!window || at - window.start >= windowMs) {
        window = { start: at, count: 0, windowMs };
        windows.set(key, window);
      }
      if (ceiling !== undefined && window.count + amount > ceiling) return { start: window.start, count: window.count, charged: false, resetsInMs: window.start + windowMs - at };
      window.count += amount;
      return { start: window.start, count: window.count, charged: true, resetsInMs: window.start + windowMs - at };
    },
  };
}
