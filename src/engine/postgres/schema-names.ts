import { fileTimestamp } from "../../config/data-volume.js";

/**
 * Names of the schemas a restore makes and keeps, stamped with the UTC time (20261127t204344z: sorts by time). Lower
 * case, so that an operator names them in psql without quotes.
 */
export const restoredSchemaName = (now = new Date()) => `lds_restore_${fileTimestamp(now).toLowerCase()}`;
export const preRestoreSchemaName = (now = new Date()) => `lds_pre_restore_${fileTimestamp(now).toLowerCase()}`;
