/**
 * The advisory lock of "replicas serve this database": every serving replica holds it shared, on a connection of its
 * own, for as long as it serves; what must run while no replica serves (putting a restored schema in place, rotating
 * the key) takes it exclusively, and fails (volume_locked) rather than waits for them. Any constant works if nothing
 * else in the database uses it: "LDS" and 2 (migrate.ts's schema lock is "LDS" and 1).
 */
export const SERVING_LOCK = 0x4c445302;

/** How long an exclusive taker waits for serving replicas to let go before it gives up. */
export const SERVING_LOCK_WAIT_MS = 5_000;

/**
 * The advisory lock of "a backup of this database runs": one at a time across processes and replicas, held by the
 * backup on a connection of its own (engine/postgres/backup-lock.ts), so that the server frees it if the holder dies.
 */
export const BACKUP_LOCK = 0x4c445303;
