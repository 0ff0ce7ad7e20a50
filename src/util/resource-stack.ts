/**
 * What a start-up acquires, closed in the reverse order of acquisition. The start-up registers each resource's
 * closer as soon as it holds the resource; a step that fails unwinds what the earlier steps took, and the shutdown
 * unwinds the same stack: one list, so the two paths cannot drift apart (they had: a failed start left threads open).
 */
export interface ResourceStack {
  /** Register how to close the resource just acquired; it is closed before everything registered earlier. */
  defer(close: () => unknown): void;
  /**
   * Close everything, last registered first, each once. A closer that fails does not stop the others (the volume's
   * lock is released even when a thread would not stop); the first failure is thrown once all have run.
   */
  unwind(): Promise<void>;
}

export function resourceStack(): ResourceStack {
  const closers: Array<() => unknown> = [];
  return {
    defer(close) {
      closers.push(close);
    },
    async unwind() {
      let failure: { err: unknown } | undefined;
      for (let close = closers.pop(); close; close = closers.pop()) {
        try {
          await close();
        } catch (err) {
          failure ??= { err };
        }
      }
      if (failure) throw failure.err;
    },
  };
}
