import { Cron } from "croner";
import { LdsError } from "../errors.js";
import { driverOfKind } from "../destinations/registry.js";
import type { Store } from "../store/store.js";

/**
 * The backup configuration as stored and as GET /api/backup/config answers. The destination's fields are its
 * driver's (destinations/registry.ts); a secret setting is write-only: never included, only `<key>Set: boolean`.
 */
export interface BackupConfig {
  destination: DestinationConfig;
  schedule: { preset: SchedulePreset; cron: string | null; timezone: string };
  /** Keep the newest N archives after each successful backup; null keeps all. */
  retention: { keep: number | null };
  compression: "none" | "gzip";
  /** Encrypt archives with age to these recipients (public keys); empty: archives hold the volume key in clear. */
  encryption: { recipients: string[] };
  /** Restore drills run by the server: after every backup, daily (04:30) on the newest archive, or never. */
  drill: { schedule: "off" | "after-backup" | "daily" };
}
/** `{type: "local", path}`, `{type: "s3", bucket, region, …}`: the fields its driver declares (docs/admin-api.md). */
export interface DestinationConfig {
  type: string;
  [field: string]: unknown;
}
export type SchedulePreset = "off" | "daily" | "every-6-hours" | "weekly" | "custom";

/** What each preset runs. Daily and weekly at 03:00 in the schedule's timezone, off the hour rush of other jobs. */
export const PRESET_CRON: Record<Exclude<SchedulePreset, "off" | "custom">, string> = {
  daily: "0 3 * * *",
  "every-6-hours": "0 */6 * * *",
  weekly: "0 3 * * 0",
};

export const DEFAULT_BACKUP_CONFIG: BackupConfig = {
  destination: { type: "local", path: null },
  schedule: { preset: "off", cron: null, timezone: "UTC" },
  retention: { keep: null },
  compression: "none",
  encryption: { recipients: [] },
  drill: { schedule: "off" },
};

const SETTING = "backup.config";
/** Where a destination's secret setting is sealed: backup.<kind>.<key> (0.3 stored S3's as backup.s3.secretAccessKey). */
const secretName = (kind: string, key: string) => `backup.${kind}.${key}`;
const secretKeys = (kind: string) =>
  driverOfKind(kind)
    .settings.filter((s) => s.secret)
    .map((s) => s.key);

export async function loadBackupConfig(store: Store): Promise<BackupConfig> {
  const stored = await store.settings.get(SETTING);
  // Configurations stored before 0.5 have no encryption: none.
  const config: BackupConfig = { ...structuredClone(DEFAULT_BACKUP_CONFIG), ...(stored ? (JSON.parse(stored) as BackupConfig) : {}) };
  for (const key of secretKeys(config.destination.type)) config.destination[`${key}Set`] = await store.settings.hasSecret(secretName(config.destination.type, key));
  return config;
}

/** A destination's secret settings, unsealed, for its driver only: they never leave the process. */
export async function loadDestinationSecrets(store: Store, kind: string): Promise<Map<string, string | undefined>> {
  const secrets = new Map<string, string | undefined>();
  for (const key of secretKeys(kind)) secrets.set(key, await store.settings.secret(secretName(kind, key)));
  return secrets;
}

/**
 * Validate and store an update. A secret setting (S3's `secretAccessKey`) is write-only: given, it is sealed;
 * absent, the stored one is kept; an empty string removes it (for S3, back to the default credential chain). The
 * request body has already passed the JSON schema; this checks what a schema cannot (the cron expression, the timezone).
 */
export async function saveBackupConfig(store: Store, update: BackupConfig): Promise<BackupConfig> {
  const { schedule } = update;
  if (schedule.preset === "custom") {
    if (!schedule.cron) throw invalid("schedule.cron", 'is required when schedule.preset is "custom"');
    checkCron(schedule.cron, schedule.timezone);
  } else {
    checkCron(schedule.preset === "off" ? "0 3 * * *" : PRESET_CRON[schedule.preset], schedule.timezone);
  }
  const destination: DestinationConfig = { ...update.destination };
  const secrets = secretKeys(destination.type).map((name) => ({ name: secretName(destination.type, name), value: destination[name] as string | undefined }));
  for (const name of secretKeys(destination.type)) {
    delete destination[name];
    delete destination[`${name}Set`];
  }
  const toStore: BackupConfig = { ...update, destination, schedule: { ...schedule, cron: schedule.preset === "custom" ? schedule.cron : null } };
  await store.settings.saveWithSecrets(SETTING, JSON.stringify(toStore), secrets);
  return loadBackupConfig(store);
}

/** The cron expression a schedule runs, or null when it is off. */
export function scheduleCron(config: BackupConfig): string | null {
  const { preset, cron } = config.schedule;
  if (preset === "off") return null;
  return preset === "custom" ? cron : PRESET_CRON[preset];
}

function checkCron(expression: string, timezone: string): void {
  try {
    new Cron(expression, { timezone, paused: true }).stop();
  } catch (err) {
    const message = (err as Error).message;
    if (/timezone|time zone/i.test(message)) throw invalid("schedule.timezone", `"${timezone}" is not a known IANA timezone`);
    throw invalid("schedule.cron", `"${expression}" is not a valid cron expression (${message})`);
  }
  if (!isTimezone(timezone)) throw invalid("schedule.timezone", `"${timezone}" is not a known IANA timezone`);
}

function isTimezone(tz: string): boolean {
  try {
    new Intl.DateTimeFormat("en", { timeZone: tz });
    return true;
  } catch {
    return false;
  }
}

function invalid(field: string, what: string): LdsError {
  return new LdsError("validation_error", `${field} ${what}.`, { hint: "Correct that field and send the configuration again." });
}
