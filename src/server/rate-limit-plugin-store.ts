import type { FastifyRateLimitStore, FastifyRateLimitStoreCtor } from "@fastify/rate-limit";
import type { RequestWindowStore } from "../store/store.js";

/**
 * @fastify/rate-limit's counters (the login route's limit per client address) kept in the store's request windows,
 * so that replicas behind one load balancer share them instead of each allowing the limit. Each route limited
 * through the plugin counts under its own method and path.
 */
export function rateLimitPluginStore(windows: RequestWindowStore): FastifyRateLimitStoreCtor {
  const storeFor = (prefix: string): FastifyRateLimitStore => ({
    incr(key, callback, timeWindow) {
      windows.charge(`${prefix}${key}`, timeWindow, 1).then(
        (window) => callback(null, { current: window.count, ttl: Math.max(0, window.resetsInMs) }),
        (err: Error) => callback(err),
      );
    },
    // The plugin hands a route's merged settings, the route under `routeInfo`.
    child: (params) => {
      const route = (params as { routeInfo?: { method?: string | string[]; url?: string } }).routeInfo;
      return storeFor(`plugin:${String(route?.method ?? "")}:${route?.url ?? ""}:`);
    },
  });
  return class {
    constructor() {
      return storeFor("plugin:");
    }
  } as unknown as FastifyRateLimitStoreCtor;
}
