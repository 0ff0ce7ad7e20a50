import { Readable } from "node:stream";
import { setTimeout as sleep } from "node:timers/promises";

export interface ResumableOptions {
  /** First and last byte wanted (inclusive). */
  start: number;
  end: number;
  /** Open the source at `from`; called again after a dropped connection, from the first byte not yet received. */
  open(from: number): Promise<Readable>;
  /** Consecutive failures tolerated before giving up. @default 5 */
  retries?: number;
  signal?: AbortSignal;
}

/**
 * A download that survives dropped connections: when the body fails or ends early, it reopens with a range
 * starting at the next byte instead of starting again. Progress resets the retry budget.
 */
export function resumableStream(options: ResumableOptions): Readable {
  const retries = options.retries ?? 5;
  async function* bytes() {
    let next = options.start;
    let failures = 0;
    while (next <= options.end) {
      try {
        const body = await options.open(next);
        for await (const chunk of body as AsyncIterable<Buffer>) {
          next += chunk.length;
          failures = 0;
          yield chunk;
        }
        if (next <= options.end) throw new Error(`connection closed after byte ${next - 1} of ${options.end}`);
      } catch (err) {
        if (options.signal?.aborted || ++failures > retries) throw err;
        await sleep(200 * 2 ** (failures - 1));
      }
    }
  }
  return Readable.from(bytes(), { objectMode: false });
}
