import { GENERAL_SETTINGS } from "../config/setting-names.js";
import { destinationDrivers } from "../destinations/registry.js";
import { renderHint, type HintAction, type HintArgs, type HintWords } from "../hints.js";

/**
 * How the server words a hint for an HTTP client or the dashboard: a setting as the field of the configuration it
 * stores (`encryption.recipients`) or the environment variable it reads, an action as the request that does it or,
 * for operator actions, what to ask an operator for.
 */
function serverSettingName(key: string): string | undefined {
  const general = GENERAL_SETTINGS[key];
  if (general) return general.field ? `${general.field} in the backup configuration` : general.env;
  const [kind, field] = key.split(".");
  const driver = destinationDrivers().find((d) => d.kind === kind);
  if (driver && field) return `destination.${field} in the backup configuration`;
  return undefined;
}

const REQUESTS: Record<HintAction, (args: HintArgs) => string> = {
  "library.submit": () => "POST /v2/add/repo/hostb",
  "library.refresh": ({ libraryName }) => `POST /v1/refresh {"libraryName": "${libraryName ?? "…"}"}`,
  "library.addBranch": ({ branch }) => `POST /v2/add/repo/hostb {"docsRepoUrl": "…", "branch": "${branch ?? "…"}"}`,
  "library.indexVersion": () => "an operator's lds ingest git --tag",
  "library.list": () => "GET /v2/libs/search?libraryName=NAME, or the dashboard's Libraries page",
  "library.move": ({ id }) => `an operator's lds libraries move ${id ?? "ID"}`,
  "team.list": () => "the dashboard's Teams & keys page, or an operator's lds teams list",
  "team.addProject": () => "an operator's lds teams add-project",
  "team.policy": () => "PATCH /v2/policies",
  "user.add": () => "in the dashboard's Teams & keys page, or an operator's lds users add",
  "key.create": () => "in the dashboard's Teams & keys page, or an operator's lds keys create",
  "key.list": () => "the dashboard's Teams & keys page, or an operator's lds keys list",
  "connection.addGit": ({ host }) => `Connect in the dashboard's Connections page, or an operator's lds connections add-git --host ${host ?? "HOST"}`,
  "connection.addWiki": () => "Connect in the dashboard's Connections page, or an operator's lds connections add-wiki",
  "backup.status": () => "GET /api/backup/status",
  "backup.list": () => "GET /api/backups",
  "restore.finish": () => "starting the server",
  "restore.intoDatabase": () => "an operator's lds-restore ARCHIVE --database-url URL, with every replica stopped",
};

export const SERVER_HINT_WORDS: HintWords = {
  setting: serverSettingName,
  action: (name, args) => REQUESTS[name](args),
};

/** A record with a neutral hint (a warning, a stored error), its hint worded for HTTP clients and the dashboard. */
export function worded<T extends { hint?: string }>(record: T): T {
  return record.hint ? { ...record, hint: renderHint(record.hint, SERVER_HINT_WORDS) } : record;
}
