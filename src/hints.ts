/**
 * The words of a hint that belong to a shell, written neutrally below the shells (issue 12): a setting by its key,
 * an action by its name. The CLI renders them as flags, environment variables and commands (cli/hint-words.ts); an
 * HTTP client or a web page would render the same hint as configuration fields, endpoints and buttons.
 */

/** What an operator or a client can do next, named by intent. Each shell must say how it is done there. */
export const HINT_ACTIONS = [
  "library.submit",
  "library.refresh",
  "library.addBranch",
  "library.indexVersion",
  "library.list",
  "library.move",
  "team.list",
  "team.addProject",
  "team.policy",
  "user.add",
  "key.create",
  "key.list",
  "connection.addGit",
  "connection.addWiki",
  "backup.status",
  "backup.list",
  "restore.finish",
  "restore.intoDatabase",
] as const;

export type HintAction = (typeof HINT_ACTIONS)[number];

/** Arguments of an action that a shell may show (a library id, an email, a host, a branch). */
export type HintArgs = Record<string, string>;

/** A setting named in a hint: `{key}` (`{s3.region}`, `{dataDir}`). */
export function setting(key: string): string {
  return `{${key}}`;
}

/** An action named in a hint: `{@name arg=value …}`, values percent-encoded so that any text survives. */
export function action(name: HintAction, args: HintArgs = {}): string {
  const params = Object.entries(args).map(([key, value]) => ` ${key}=${encodeURIComponent(value)}`);
  return `{@${name}${params.join("")}}`;
}

/** How one shell words settings and actions. */
export interface HintWords {
  /** Undefined for a key the shell does not know: the token is then left as it is. */
  setting(key: string): string | undefined;
  action(name: HintAction, args: HintArgs): string;
}

const ACTION_TOKEN = /\{@([\w.]+)((?: \w+=[^\s}]*)*)\}/g;
const SETTING_TOKEN = /\{([A-Za-z][\w.]*)\}/g;

/** A hint in one shell's words. */
export function renderHint(hint: string, words: HintWords): string {
  const withActions = hint.replace(ACTION_TOKEN, (token, name: string, params: string) => {
    if (!(HINT_ACTIONS as readonly string[]).includes(name)) return token;
    const args: HintArgs = {};
    for (const pair of params.trim().split(" ").filter(Boolean)) {
      const at = pair.indexOf("=");
      args[pair.slice(0, at)] = decodeURIComponent(pair.slice(at + 1));
    }
    return words.action(name as HintAction, args);
  });
  return withActions.replace(SETTING_TOKEN, (token, key: string) => words.setting(key) ?? token);
}
