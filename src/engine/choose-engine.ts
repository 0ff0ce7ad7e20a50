import { DEFAULT_ENGINE } from "../config/data-volume.js";
import { LdsError } from "../errors.js";
import type { Engine, EngineWork } from "./engine.js";
import { postgresEngine } from "./postgres/postgres-engine.js";
import { sqliteEngine } from "./sqlite/sqlite-engine.js";

/** The engines this build has, by the name a volume's settings give. */
const ENGINES: ReadonlyMap<string, Engine> = new Map([
  [sqliteEngine.name, sqliteEngine],
  [postgresEngine.name, postgresEngine],
]);

export { DEFAULT_ENGINE };

/**
 * The engine named by a volume's parsed settings (`DataVolume.engine`, config/database-settings.ts). Each name has
 * one engine object for the process, so asking again is a lookup. Refuses a name this build does not have.
 */
export function chooseEngine(settings: { engine: { name: string } }): Engine {
  const engine = ENGINES.get(settings.engine.name);
  if (engine) return engine;
  throw new LdsError("validation_error", `There is no database engine called "${settings.engine.name}"; this LDS has ${[...ENGINES.keys()].map((n) => `"${n}"`).join(", ")}.`, {
    hint: `Set the data volume's engine to one of those (${DEFAULT_ENGINE} is the default).`,
  });
}

/**
 * Refuse `command` up front when the engine cannot do `work` yet: one clear engine_unsupported naming the command,
 * the engine and what to use instead, before the command takes a lock or opens a connection.
 */
export function requireEngineWork(engine: Engine, work: EngineWork, command: string): void {
  const refusal = engine.notYet(work, command);
  if (refusal) throw refusal;
}
