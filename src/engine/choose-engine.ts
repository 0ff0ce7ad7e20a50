import { DEFAULT_ENGINE } from "../config/data-volume.js";
import { LdsError } from "../errors.js";
import type { Engine } from "./engine.js";
import { sqliteEngine } from "./sqlite/sqlite-engine.js";

/** The engines this build has, by the name a volume's settings give. */
const ENGINES: ReadonlyMap<string, Engine> = new Map([[sqliteEngine.name, sqliteEngine]]);

export { DEFAULT_ENGINE };

/**
 * The engine named by a volume's parsed settings (`DataVolume.engine`). Each name has one engine object for the
 * process, so asking again is a lookup. Refuses a name this build does not have.
 */
export function chooseEngine(settings: { engine: string }): Engine {
  const engine = ENGINES.get(settings.engine);
  if (engine) return engine;
  throw new LdsError("validation_error", `There is no database engine called "${settings.engine}"; this LDS has ${[...ENGINES.keys()].map((n) => `"${n}"`).join(", ")}.`, {
    hint: `Set the data volume's engine to one of those (${DEFAULT_ENGINE} is the default).`,
  });
}
