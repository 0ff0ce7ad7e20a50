import { databaseSettingsFromEnv, type DatabaseSettings } from "../config/database-settings.js";
import { chooseEngine, requireEngineWork } from "../engine/choose-engine.js";
import type { EngineWork } from "../engine/engine.js";

let parsed: DatabaseSettings | undefined;

/** The database settings of this command (LDS_DATABASE_URL and its companions), parsed once per process. */
export function commandDatabase(): DatabaseSettings {
  return (parsed ??= databaseSettingsFromEnv(process.env));
}

/**
 * Refuse `command` before it takes anything when the configured engine cannot do `work` yet (engine_unsupported,
 * naming what to use instead).
 */
export function requireCommandWork(work: EngineWork, command: string): void {
  requireEngineWork(chooseEngine({ engine: commandDatabase() }), work, command);
}
