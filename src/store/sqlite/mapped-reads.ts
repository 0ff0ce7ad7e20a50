/**
 * How much of a database file a connection that reads through a memory map maps (SQLite's mmap_size): the server's
 * connections to lds.db and vectors.db, and the search threads' own. Shared so that every connection maps alike.
 */
export const MMAP_BYTES = 1024 ** 3;
