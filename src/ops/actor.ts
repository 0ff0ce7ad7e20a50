import type { Caller } from "../store/records.js";

/**
 * Who made a change, as the audit log names it. Each shell has its own wording, so that `lds audit` tells them
 * apart, while the rest of a record (action, subject, details) is the use case's and the same whoever makes it.
 */
export type Actor = `admin:${string}` | `cli:${string}` | `key:${string}` | `server:${string}`;

/** An operator signed in to the dashboard or the admin API, by admin username. */
export const adminActor = (username: string): Actor => `admin:${username}`;

/** An operator at the command line, by OS user (as `lds libraries move` has always recorded it). */
export const cliActor = (osUser: string): Actor => `cli:${osUser}`;

/** A client of the public API, by its key's prefix (never the key). */
export const keyActor = (caller: Pick<Caller, "keyPrefix">): Actor => `key:${caller.keyPrefix}`;

/** The server itself, acting on its settings at start (the first admin from LDS_ADMIN_PASSWORD), by the setting. */
export const settingActor = (setting: string): Actor => `server:${setting}`;
