import type pg from "pg";
import { translateError } from "./pool.js";
import { sqlOn, type Sql } from "./sql.js";

/**
 * Run `work` in one transaction on a connection of its own: BEGIN, then COMMIT when it resolves or ROLLBACK when it
 * throws; the connection goes back to the pool either way (destroyed when the rollback itself failed, so that a
 * connection in an unknown state is never reused).
 */
export async function inTransaction<T>(pool: pg.Pool, endpoint: { host: string; port: number }, work: (tx: Sql, client: pg.PoolClient) => Promise<T>): Promise<T> {
  let client: pg.PoolClient;
  try {
    client = await pool.connect();
  } catch (err) {
    throw translateError(err, endpoint);
  }
  let broken: Error | undefined;
  // A connection lost while the transaction holds it (a database restart) emits "error" on the client, which the pool
  // listens for only on idle clients: unhandled, it would end the process. The statement under way fails with it
  // (database_unreachable), and the connection is destroyed at release instead of going back to the pool.
  const lost = (err: Error) => (broken ??= err);
  client.on("error", lost);
  try {
    const tx = sqlOn(client, endpoint);
    try {
      await tx.run("BEGIN");
      const result = await work(tx, client);
      await tx.run("COMMIT");
      return result;
    } catch (err) {
      await client.query("ROLLBACK").catch((rollbackError: Error) => (broken = rollbackError));
      throw err;
    }
  } finally {
    client.off("error", lost);
    client.release(broken);
  }
}
