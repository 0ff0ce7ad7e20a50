import type { FastifyReply } from "fastify";
import { LdsError } from "../errors.js";

/**
 * A fixed-window request counter per key (an API key's prefix, or a client address). Hand-written rather than
 * @fastify/rate-limit because the spec wants `RateLimit-Reset` as a Unix timestamp, which that plugin cannot send.
 */
export function createRateLimiter(windowMs = 60_000) {
  const windows = new Map<string, { start: number; count: number }>();
  let sweep = Date.now();

  return {
    /** Count one request; sets the RateLimit headers; throws `rate_limit_exceeded` (429) past `limit`. */
    hit(key: string, limit: number, reply: FastifyReply): void {
      const now = Date.now();
      if (now - sweep > windowMs) {
        for (const [k, w] of windows) if (now - w.start >= windowMs) windows.delete(k);
        sweep = now;
      }
      let window = windows.get(key);
      if (!window || now - window.start >= windowMs) {
        window = { start: now, count: 0 };
        windows.set(key, window);
      }
      window.count++;
      const resetAt = Math.ceil((window.start + windowMs) / 1000);
      reply.header("RateLimit-Limit", limit).header("RateLimit-Remaining", Math.max(0, limit - window.count)).header("RateLimit-Reset", resetAt);
      if (window.count > limit) {
        reply.header("Retry-After", Math.max(1, resetAt - Math.floor(now / 1000)));
        throw new LdsError("rate_limit_exceeded", `Rate limit exceeded: ${limit} requests per minute. Try again after ${new Date(resetAt * 1000).toISOString()}.`);
      }
    },
  };
}
