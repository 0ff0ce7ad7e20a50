import { LdsError } from "../../errors.js";

/**
 * A group of the store whose PostgreSQL operations are not written yet: every operation rejects, naming itself, so
 * that nothing silently answers empty. Removed once every group is implemented.
 */
export function notYet<T extends object>(group: string): T {
  return new Proxy({} as T, {
    get: (_target, operation) => async () => {
      throw new LdsError("internal_error", `${group}.${String(operation)} is not implemented on PostgreSQL yet.`);
    },
  });
}
