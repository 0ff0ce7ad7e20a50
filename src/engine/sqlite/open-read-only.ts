import Database from "better-sqlite3";
import { fromSystemError } from "../../errors.js";

/**
 * Open an existing SQLite file read-only (a staged or archived copy this engine reads from): a file that is not there
 * or cannot be read is the LdsError its system error says (path_not_found, permission_denied, …) about `file`.
 */
export function openReadOnly(file: string): Database.Database {
  try {
    return new Database(file, { readonly: true, fileMustExist: true });
  } catch (err) {
    throw fromSystemError(err, file);
  }
}
