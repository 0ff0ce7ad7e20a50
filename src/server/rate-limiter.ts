import type { FastifyReply } from "fastify";
import { LdsError } from "../errors.js";

type Window = { start: number; count: number };

interface Admission {
  windowOf: (now: number) => Window;
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
 * A fixed-window request counter per key (an API key's prefix, or a client address). Hand-written rather than
 * @fastify/rate-limit because the spec wants `RateLimit-Reset` as a Unix timestamp, which that plugin cannot send.
 */
export function createRateLimiter(windowMs = 60_000) {
  const windows = new Map<string, Window>();
  let sweep = Date.now();

  const windowOf = (key: string, now: number): Window => {
    if (now - sweep > windowMs) {
      for (const [k, w] of windows) if (now - w.start >= windowMs) windows.delete(k);
      sweep = now;
    }
    let window = windows.get(key);
    if (!window || now - window.start >= windowMs) {
      window = { start: now, count: 0 };
      windows.set(key, window);
    }
    return window;
  };

  return {
    /** Count one request; sets the RateLimit headers; throws `rate_limit_exceeded` (429) past `limit`. */
    hit(key: string, limit: number, reply: FastifyReply): void {
      const now = Date.now();
      const window = windowOf(key, now);
      window.count++;
      if (!admissions.has(reply)) admissions.set(reply, { windowOf: (at) => windowOf(key, at), limit, windowMs });
      setHeaders(reply, limit, window, windowMs);
      if (window.count > limit) {
        refuse(reply, window, windowMs, now, `Rate limit exceeded: ${limit} requests per minute. Try again after ${resetTime(window, windowMs)}.`);
      }
    },
  };
}

/**
 * Charge a request that turned out to be `requests` requests (a JSON-RPC batch of that many messages) to the window
 * that admitted it, which counted one already. All or nothing: when fewer are left, nothing more is counted, the
 * headers say what is left, and `rate_limit_exceeded` (429) is thrown before any of the work runs.
 */
export function chargeAsMany(reply: FastifyReply, requests: number, what: string): void {
  const admission = admissions.get(reply);
  // Every public API request passes a limiter first; reaching here without one is a wiring fault, never free work.
  if (!admission) throw new Error("chargeAsMany: this request was not admitted by a rate limiter");
  const { limit, windowMs } = admission;
  const now = Date.now();
  const window = admission.windowOf(now);
  const more = requests - 1;
  if (more <= 0) return;
  if (window.count + more > limit) {
    setHeaders(reply, limit, window, windowMs);
    const left = Math.max(0, limit - window.count + 1);
    refuse(
      reply,
      window,
      windowMs,
      now,
      `Rate limit exceeded: ${what} counts as ${requests} requests, and ${left} of the ${limit} requests per minute were left; none of it ran. Send fewer at once, or try again after ${resetTime(window, windowMs)}.`,
    );
  }
  window.count += more;
  setHeaders(reply, limit, window, windowMs);
}

function setHeaders(reply: FastifyReply, limit: number, window: Window, windowMs: number): void {
  reply
    .header("RateLimit-Limit", limit)
    .header("RateLimit-Remaining", Math.max(0, limit - window.count))
    .header("RateLimit-Reset", Math.ceil((window.start + windowMs) / 1000));
}

function resetTime(window: Window, windowMs: number): string {
  return new Date(Math.ceil((window.start + windowMs) / 1000) * 1000).toISOString();
}

function refuse(reply: FastifyReply, window: Window, windowMs: number, now: number, message: string): never {
  reply.header("Retry-After", Math.max(1, Math.ceil((window.start + windowMs) / 1000) - Math.floor(now / 1000)));
  throw new LdsError("rate_limit_exceeded", message);
}
