import { LdsError } from "../errors.js";

/**
 * A whole number from an environment variable, refused with the variable's name when it is set but not usable.
 * `fallback` is the value when unset (none: the variable is required); `max` bounds it from above when given.
 */
export function wholeFromEnv(env: NodeJS.ProcessEnv, name: string, fallback: number | undefined, min = 1, max?: number): number {
  const raw = env[name]?.trim();
  if (!raw && fallback !== undefined) return fallback;
  const value = Number(raw);
  if (raw && Number.isInteger(value) && value >= min && (max === undefined || value <= max)) return value;
  const range = max === undefined ? `of at least ${min}` : `from ${min} to ${max}`;
  throw new LdsError("validation_error", `${name} must be a whole number ${range}${raw ? ` (got "${raw.slice(0, 40)}")` : ""}.`, {
    hint: fallback === undefined ? `Set ${name}, then start again.` : `Correct or unset ${name} (unset: ${fallback}), then start again.`,
  });
}
