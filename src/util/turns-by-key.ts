/**
 * Work that runs one at a time per key, in the order asked, within this process: the next caller's work starts once
 * the previous one's settled (whether it resolved or threw). For what one process alone reaches (a SQLite volume);
 * a shared database holds a row lock instead.
 */
export function turnsByKey<K>(): <T>(key: K, work: () => Promise<T>) => Promise<T> {
  const last = new Map<K, Promise<unknown>>();
  return async (key, work) => {
    const before = last.get(key) ?? Promise.resolve();
    const turn = before.then(work, work);
    last.set(key, turn);
    try {
      return await turn;
    } finally {
      // The map keeps only keys with work waiting or running.
      if (last.get(key) === turn) last.delete(key);
    }
  };
}
