/** A row that would break a UNIQUE constraint or index (SQLSTATE 23505: SQLite's SQLITE_CONSTRAINT_UNIQUE). */
export function isUniqueViolation(err: unknown): boolean {
  return (err as { code?: unknown } | undefined)?.code === "23505";
}
