import fs from "node:fs";
import { LdsError } from "../errors.js";
import type { Destination } from "./destination.js";
import type { DestinationDriver, DriverSetting, DriverSettings } from "./driver.js";
import { localDriver } from "./local-driver.js";
import { s3Driver } from "./s3-driver.js";

/**
 * Every destination driver. A driver is one file that declares itself (driver.ts); adding one is its file, its line
 * here, its conformance test and its doc: the CLI's options, its settings from flags and the environment, and the
 * locations it claims all come from this list. The driver without a scheme (local paths) must stay last.
 */
const DRIVERS: DestinationDriver[] = [s3Driver, localDriver];

export function destinationDrivers(): readonly DestinationDriver[] {
  return DRIVERS;
}

/** Add a driver before the fallback (for tests, and for drivers loaded later). */
export function registerDriver(driver: DestinationDriver): void {
  if (DRIVERS.some((d) => d.kind === driver.kind)) throw new Error(`a destination driver "${driver.kind}" is registered already`);
  DRIVERS.splice(DRIVERS.length - 1, 0, driver);
}

/** The driver of a configured destination's `type`. */
export function driverOfKind(kind: string): DestinationDriver {
  const driver = DRIVERS.find((d) => d.kind === kind);
  if (!driver) throw new LdsError("validation_error", `No destination driver "${kind}"; known: ${DRIVERS.map((d) => d.kind).join(", ")}.`);
  return driver;
}

/**
 * The destination a stored configuration describes: its location and settings from the configuration's fields,
 * its secrets (write-only fields) from `secret`, which unseals them only for the driver.
 */
export function openConfigured(config: { type: string } & Record<string, unknown>, secret: (key: string) => string | undefined, defaults: { backupsDir: string }): Promise<Destination> {
  const driver = driverOfKind(config.type);
  const settings: DriverSettings = {};
  for (const s of driver.settings) settings[s.key] = s.secret ? secret(s.key) : (config[s.key] as string | boolean | undefined);
  return driver.open(driver.locationOf(config, defaults), settings);
}

/** The driver of a location: the one whose scheme it starts with, else the local fallback. */
export function driverFor(location: string): DestinationDriver {
  const scheme = /^([a-z][a-z0-9+.-]*):\/\//.exec(location)?.[1];
  return DRIVERS.find((d) => d.scheme !== null && d.scheme === scheme) ?? DRIVERS[DRIVERS.length - 1]!;
}

/** A destination from what an operator typed, with its driver's settings from flags and the environment the shell gives. */
export function openLocation(location: string, flags: Record<string, unknown>, env: NodeJS.ProcessEnv): Promise<Destination> {
  const driver = driverFor(location);
  return driver.open(location, settingsFrom(driver, flags, env));
}

/** An archive named by a remote location (s3://…/name), or undefined for a file on this machine. */
export async function openRemoteArchive(location: string, flags: Record<string, unknown>, env: NodeJS.ProcessEnv): Promise<{ destination: Destination; name: string } | undefined> {
  const driver = driverFor(location);
  return driver.scheme === null ? undefined : driver.openArchive(location, settingsFrom(driver, flags, env));
}

/** A driver's settings: a flag wins over its environment variable; a secret comes from the environment or a file. */
export function settingsFrom(driver: DestinationDriver, flags: Record<string, unknown>, env: NodeJS.ProcessEnv): DriverSettings {
  const settings: DriverSettings = {};
  for (const setting of driver.settings) settings[setting.key] = setting.secret ? secretValue(setting, flags, env) : plainValue(setting, flags, env);
  return settings;
}

/** yargs' camel-case name of a flag: "s3-region" → "s3Region". */
export function flagProperty(flag: string): string {
  return flag.replace(/-([a-z0-9])/g, (_, c: string) => c.toUpperCase());
}

function plainValue(setting: DriverSetting, flags: Record<string, unknown>, env: NodeJS.ProcessEnv): string | boolean | undefined {
  const flag = flags[flagProperty(setting.flag)];
  if (setting.type === "boolean") {
    if (typeof flag === "boolean") return flag;
    return env[setting.env] ? /^(1|true|yes)$/i.test(env[setting.env]!) : undefined;
  }
  return (typeof flag === "string" && flag) || env[setting.env] || undefined;
}

function secretValue(setting: DriverSetting, flags: Record<string, unknown>, env: NodeJS.ProcessEnv): string | undefined {
  const file = flags[flagProperty(`${setting.flag}-file`)];
  if (typeof file !== "string" || !file) return env[setting.env] || undefined;
  try {
    return fs.readFileSync(file, "utf8").trim();
  } catch {
    throw new LdsError("validation_error", `Cannot read the file ${file} given to --${setting.flag}-file.`, {
      hint: `Check the path given to --${setting.flag}-file and its permissions (or set ${setting.env}).`,
    });
  }
}
