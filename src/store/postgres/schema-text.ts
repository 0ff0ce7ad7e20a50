/**
 * The current time as lds.db stores it (ISO 8601, milliseconds, "Z"), so that timestamps compare as text in both
 * engines and a backup copies them into a SQLite file unchanged. clock_timestamp(), not now(): SQLite's 'now' is the
 * statement's time, not the transaction's start.
 */
export const NOW_TEXT = `to_char(clock_timestamp() AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`;

/** The time `param` (a placeholder bound to a number of milliseconds) from now, as NOW_TEXT writes it. */
export const nowPlusMsText = (param: string) => `to_char((clock_timestamp() + ${param} * interval '1 millisecond') AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`;
