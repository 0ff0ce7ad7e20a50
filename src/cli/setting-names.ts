import { GENERAL_SETTINGS } from "../config/setting-names.js";
import { destinationDrivers } from "../destinations/registry.js";

/**
 * How the CLI names a setting a hint refers to (`{dataDir}`, `{s3.region}`): its flag and environment variable.
 * A destination's setting comes from its driver's declaration; a field of its location (an S3 bucket) is named
 * as part of the location.
 */
export function cliSettingName(key: string): string | undefined {
  const general = GENERAL_SETTINGS[key];
  if (general) return [...(general.flags ?? []).map((f) => `--${f}`), ...(general.env ? [general.env] : [])].join(" or ") || undefined;
  const [kind, field] = key.split(".");
  const driver = destinationDrivers().find((d) => d.kind === kind);
  const declared = driver?.settings.find((s) => s.key === field);
  if (declared) return `${declared.secret ? `--${declared.flag}-file` : `--${declared.flag}`} or ${declared.env}`;
  if (driver && field && field in driver.config.properties) return `the ${field} in the ${driver.scheme}:// location`;
  return undefined;
}
