import type { FastifyReply } from "fastify";
import { LdsError } from "../errors.js";
import type { RequestWindow, RequestWindowStore } from "../store/store.js";

interface Admission {
  windows: RequestWindowStore;
  key: string;
  limit: number;
  windowMs: number;
}

/**
 * The window that admitted each request (the first limiter that charged its reply: the public API's hook, before
 * any route's own limiter), so that a route which learns from the body that one request is many (a JSON-RPC batch)
 * can charge the rest to the same window: `chargeAsMany`.
 */
const admissions = new WeakMap<FastifyReply, Admission>();

/**
 * A fixed-window request counter per key (an API key's prefix, or a client address), counted in the store's request
 * windows, so that every replica serving the records counts against one limit (`name` keeps limiters' keys apart).
 * Hand-written rather than @fastify/rate-limit because the spec wants `RateLimit-Reset` as a Unix timestamp, which
 * that plugin cannot send.
 */
export function createRateLimiter(windows: RequestWindowStore, name: string, windowMs = 60_000) {
  return {
    /** Count one request; sets the RateLimit headers; throws `rate_limit_exceeded` (429) past `limit`. */
    async hit(key: string, limit: number, reply: FastifyReply): Promise<void> {
      const windowKey = `${name}:${key}`;
      const window = await windows.charge(windowKey, windowMs, 1);
      if (!admissions.has(reply)) admissions.set(reply, { windows, key: windowKey, limit, windowMs });
      setHeaders(reply, limit, window, windowMs);
      if (window.count > limit) {
        refuse(reply, window, `Rate limit exceeded: ${limit} requests per minute. Try again after ${resetTime(window, windowMs)}.`);
      }
    },
  };
}

export type RateLimiter = ReturnType<typeof createRateLimiter>;

/**
 * Charge a request that turned out to be `requests` requests (a JSON-RPC batch of that many messages) to the window
 * that admitted it, which counted one already. All or nothing: when fewer are left, nothing more is counted, the
 * headers say what is left, and `rate_limit_exceeded` (429) is thrown before any of the work runs.
 */
export async function chargeAsMany(reply: FastifyReply, requests: number, what: string): Promise<void> {
  const admission = admissions.get(reply);
  // Every public API request passes a limiter first; reaching here without one is a wiring fault, never free work.
  if (!admission) throw new Error("chargeAsMany: this request was not admitted by a rate limiter");
  const { windows, key, limit, windowMs } = admission;
  const more = requests - 1;
  if (more <= 0) return;
  const window = await windows.charge(key, windowMs, more, limit);
  setHeaders(reply, limit, window, windowMs);
  if (!window.charged) {
    const left = Math.max(0, limit - window.count + 1);
    refuse(
      reply,
      window,
      `Rate limit exceeded: ${what} counts as ${requests} requests, and ${left} of the ${limit} requests per minute were left; none of it ran. Send fewer at once, or try again after ${resetTime(window, windowMs)}.`,
    );
  }
}

function setHeaders(reply: FastifyReply, limit: number, window: RequestWindow, windowMs: number): void {
  reply
    .header("RateLimit-Limit", limit)
    .header("RateLimit-Remaining", Math.max(0, limit - window.count))
    .header("RateLimit-Reset", Math.ceil((window.start + windowMs) / 1000));
}

function resetTime(window: RequestWindow, windowMs: number): string {
  return new Date(Math.ceil((window.start + windowMs) / 1000) * 1000).toISOString();
}

function refuse(reply: FastifyReply, window: RequestWindow, message: string): never {
  reply.header("Retry-After", Math.max(1, Math.ceil(window.resetsInMs / 1000)));
  throw new LdsError("rate_limit_exceeded", message);
}
