import { GENERAL_SETTINGS } from "../config/setting-names.js";
import { destinationDrivers } from "../destinations/registry.js";
import type { HintAction, HintArgs, HintWords } from "../hints.js";

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

/** The command that does each action of a hint; a Record, so that a new action cannot be left unworded. */
const COMMANDS: Record<HintAction, (args: HintArgs) => string> = {
  "library.submit": () => "lds ingest git URL",
  // Ingesting a library's source again refreshes it.
  "library.refresh": () => "lds ingest git URL (with the library's source)",
  "library.addBranch": ({ branch }) => `lds ingest git URL --branch ${branch ?? "BRANCH"}`,
  "library.indexVersion": () => "lds ingest git URL --tag BRANCH --version-name NAME",
  "library.list": () => "lds libraries list",
  "library.move": ({ id, to }) => `lds libraries move ${id ?? "ID"} --to ${to ?? "URL"}`,
  "team.list": () => "lds teams list",
  "team.addProject": () => "lds teams add-project TEAM PROJECT_ID",
  "team.policy": () => "lds teams restrict TEAM LIBRARY…",
  "user.add": ({ email }) => `lds users add ${email ?? "EMAIL"} --team TEAM`,
  "key.create": ({ email }) => `lds keys create --email ${email ?? "EMAIL"}`,
  "key.list": () => "lds keys list",
  "connection.addGit": ({ host }) => `lds connections add-git --host ${host ?? "HOST"}`,
  "connection.addWiki": () => "lds connections add-wiki",
  "backup.status": () => "GET /api/backup/status",
  "backup.list": () => "lds backups list",
  "restore.finish": () => "lds serve",
  "restore.intoDatabase": () => "lds-restore ARCHIVE --database-url URL (with every replica stopped)",
};

export const CLI_HINT_WORDS: HintWords = {
  setting: cliSettingName,
  action: (name, args) => `\`${COMMANDS[name](args)}\``,
};
