import type pg from "pg";
import { translateError } from "./pool.js";

/** Rows and changes of SQL on one pool or one transaction's connection; errors as LDS reports them (pool.ts). */
export interface Sql {
  rows<R>(text: string, params?: unknown[]): Promise<R[]>;
  /** The first row, or undefined. */
  row<R>(text: string, params?: unknown[]): Promise<R | undefined>;
  /** Rows changed. */
  run(text: string, params?: unknown[]): Promise<number>;
}

/** What every group of the PostgreSQL store works with: SQL on the pool, transactions, and the sealing key. */
export interface PgContext {
  sql: Sql;
  /** `work` in one transaction on one connection: committed when it resolves, rolled back when it throws. */
  transaction<T>(work: (tx: Sql) => Promise<T>): Promise<T>;
  key: Buffer;
}

export function sqlOn(target: pg.Pool | pg.ClientBase, endpoint: { host: string; port: number }): Sql {
  const query = async (text: string, params: unknown[] = []) => {
    try {
      return await target.query(text, params);
    } catch (err) {
      throw translateError(err, endpoint);
    }
  };
  return {
    rows: async <R>(text: string, params?: unknown[]) => (await query(text, params)).rows as R[],
    row: async <R>(text: string, params?: unknown[]) => (await query(text, params)).rows[0] as R | undefined,
    run: async (text, params) => (await query(text, params)).rowCount ?? 0,
  };
}
