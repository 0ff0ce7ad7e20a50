import yargs, { type Argv } from "yargs";
import { errorTable, EXIT, LdsError } from "../errors.js";
import { CONTEXT_TOKENS } from "../search/context-budget.js";
import { destinationDrivers } from "../destinations/registry.js";
import { APP_VERSION } from "../version.js";
import { reportError } from "./report-error.js";
import { armFailpoint } from "../util/failpoint.js";

/** Which command a binary runs: `lds` takes any, `lds-backup` and `lds-restore` are one command each. */
export type Entry = "lds" | "lds-backup" | "lds-restore";

const dataDirOption = {
  type: "string",
  describe: "Data volume directory (default: $LDS_DATA_DIR, else ./data)",
} as const;

/**
 * Every destination driver's settings as flags (destinations/registry.ts): each driver declares them once. A secret
 * is taken from a file (`--…-file`) or its environment variable, never from a flag's value.
 */
function destinationOptions(y: Argv): Argv {
  for (const driver of destinationDrivers()) {
    const flags: string[] = [];
    for (const s of driver.settings) {
      const flag = s.secret ? `${s.flag}-file` : s.flag;
      const otherwise = `(default: $${s.env}${s.fallback ? `, else ${s.fallback}` : ""})`;
      y = y.option(flag, { type: s.secret ? "string" : s.type, describe: s.secret ? `File holding the ${s.describe} ${otherwise}` : `${s.describe} ${otherwise}` });
      flags.push(flag);
    }
    if (flags.length) y = y.group(flags, driver.label);
  }
  return y;
}

/** The age options of the commands that write an archive (cli/archive-keys.ts). */
function encryptOptions(y: Argv): Argv {
  return y
    .option("age-recipient", { type: "array", string: true, describe: "Encrypt to this age public key (age1…), repeatable (or LDS_AGE_RECIPIENTS)" })
    .option("age-recipients-file", { type: "string", describe: "Encrypt to the age1… keys in this file (or LDS_AGE_RECIPIENTS_FILE)" })
    .option("age-passphrase-file", { type: "string", describe: "Encrypt with the passphrase in this file (or LDS_AGE_PASSPHRASE_FILE)" })
    .option("age-passphrase", { type: "boolean", describe: "Encrypt with a passphrase typed on the terminal (asked twice)" });
}

/** The age options of the commands that read an archive. */
function identityOptions(y: Argv): Argv {
  return y
    .option("identity", { type: "array", string: true, alias: "i", describe: "age identity file for an encrypted archive, repeatable (or LDS_AGE_IDENTITY_FILE)" })
    .option("passphrase-file", { type: "string", describe: "Passphrase file for a passphrase-encrypted archive (or LDS_AGE_PASSPHRASE_FILE)" });
}

/** Commands load lazily so that `lds verify` does not pay for loading the HTTP server or the AWS SDK. */
function commands(cli: Argv, entry: Entry): Argv {
  const json = { type: "boolean", default: false, describe: "Print the result as one JSON object" } as const;
  const backup = {
    builder: (y: Argv) =>
      encryptOptions(
        destinationOptions(
          y
            .option("data-dir", dataDirOption)
            .option("to", { type: "string", describe: "Directory or s3://bucket/prefix (default: <data-dir>/backups)" })
            .option("gzip", { type: "boolean", default: false, describe: "Compress the archive with gzip" })
            .option("keep", { type: "number", describe: "After success, keep only the newest N archives there" })
            .option("json", json),
        ),
      ),
    handler: lazy(() => import("./commands/backup.js")),
  };
  const restore = {
    builder: (y: Argv) =>
      identityOptions(
        destinationOptions(
          y
            .positional("archive", { type: "string", demandOption: true, describe: "Archive file, or s3://bucket/prefix/<name>" })
            .option("data-dir", dataDirOption)
            .option("database-url", {
              type: "string",
              describe:
                "Restore into this PostgreSQL database (postgres://USER@HOST:PORT/DATABASE, the password from PGPASSWORD rather than the command line, which others can read; default: $LDS_DATABASE_URL), every replica stopped",
            })
            .option("yes", { type: "boolean", default: false, alias: "y", describe: "Do not ask for confirmation" })
            .option("json", json),
        ),
      ),
    handler: lazy(() => import("./commands/restore.js")),
  };
  const from = (y: Argv) =>
    destinationOptions(y.option("data-dir", dataDirOption).option("from", { type: "string", describe: "Directory or s3://bucket/prefix (default: <data-dir>/backups)" }).option("json", json));
  if (entry === "lds-backup") return cli.command("$0", "Back up the data volume into one archive", backup.builder, backup.handler);
  if (entry === "lds-restore") return cli.command("$0 <archive>", "Restore the data volume from an archive (server stopped)", restore.builder, restore.handler);
  return cli
    .command(
      "serve",
      "Start the server on the data volume",
      (y) =>
        y
          .option("data-dir", dataDirOption)
          .option("host", { type: "string", default: "127.0.0.1", describe: "Address to listen on" })
          .option("port", { type: "number", default: 3000, describe: "Port to listen on" }),
      lazy(() => import("./commands/serve.js")),
    )
    .command("backup", "Back up the data volume into one archive (also: lds-backup)", backup.builder, backup.handler)
    .command("restore <archive>", "Restore the data volume from an archive (also: lds-restore)", restore.builder, restore.handler)
    .command(
      "init",
      "First run: create a team, its owner and an API key (shown once)",
      (y) =>
        y
          .option("email", { type: "string", demandOption: true, describe: "The owner's email address" })
          .option("team", { type: "string", default: "default", describe: "The team's name" })
          .option("plan", { choices: ["free", "pro", "enterprise"], default: "enterprise", describe: "The team's plan (self-hosted: all features)" })
          .option("data-dir", dataDirOption)
          .option("json", json),
      lazy(() => import("./commands/init.js")),
    )
    .command("admin", "Manage admin accounts of the dashboard and /api", (y) =>
      y
        .command(
          "create",
          "Create an admin (password from --password-stdin, $LDS_ADMIN_PASSWORD_FILE, $LDS_ADMIN_PASSWORD, or a prompt)",
          (c) =>
            c
              .option("data-dir", dataDirOption)
              .option("username", { type: "string", demandOption: true, describe: "The admin's username" })
              .option("password-stdin", { type: "boolean", default: false, describe: "Read the password from standard input" }),
          lazy(() => import("./commands/admin-create.js")),
        )
        .demandCommand(1, "Name a subcommand: lds admin create --username NAME."),
    )
    .command("teams", "Manage teams and their plans", (y) =>
      y
        .command(
          "create <name>",
          "Create a team",
          (c) =>
            c
              .positional("name", { type: "string", demandOption: true })
              .option("plan", { choices: ["free", "pro", "enterprise"], default: "free" })
              .option("data-dir", dataDirOption),
          lazy(() => import("./commands/teams.js")),
        )
        .command(
          "set-plan <name> <plan>",
          "Change a team's plan",
          (c) =>
            c
              .positional("name", { type: "string", demandOption: true })
              .positional("plan", { choices: ["free", "pro", "enterprise"], demandOption: true })
              .option("data-dir", dataDirOption),
          lazy(() => import("./commands/teams.js")),
        )
        .command(
          "restrict <name> [libraries..]",
          "Allow a team only these libraries (ids or patterns: /owner/*, /~team-3/**): its access policy",
          (c) => c.positional("name", { type: "string", demandOption: true }).positional("libraries", { type: "string", array: true, default: [] }).option("data-dir", dataDirOption),
          lazy(() => import("./commands/teams.js")),
        )
        .command(
          "add-project <name> <projectId>",
          "Add a project (wiki spaces are associated with one)",
          (c) =>
            c
              .positional("name", { type: "string", demandOption: true })
              .positional("projectId", { type: "string", demandOption: true })
              .option("project-name", { type: "string", default: "" })
              .option("data-dir", dataDirOption),
          lazy(() => import("./commands/teams.js")),
        )
        .command(
          "list",
          "List teams",
          (c) => c.option("data-dir", dataDirOption).option("json", json),
          lazy(() => import("./commands/teams.js")),
        )
        .demandCommand(1, "Name a subcommand: lds teams create|set-plan|restrict|list."),
    )
    .command("users", "Manage users", (y) =>
      y
        .command(
          "add <email>",
          "Add a user to a team",
          (c) =>
            c
              .positional("email", { type: "string", demandOption: true })
              .option("team", { type: "string", demandOption: true })
              .option("role", { choices: ["owner", "admin", "member"], default: "member" })
              .option("data-dir", dataDirOption),
          lazy(() => import("./commands/users.js")),
        )
        .command(
          "remove <email>",
          "Remove a user from its team (its API keys stop working; add it again to undo)",
          (c) => c.positional("email", { type: "string", demandOption: true }).option("data-dir", dataDirOption),
          lazy(() => import("./commands/users.js")),
        )
        .demandCommand(1, "Name a subcommand: lds users add EMAIL --team NAME, or lds users remove EMAIL."),
    )
    .command("connections", "A team's git and wiki accounts: add with a token ($LDS_CONNECTION_TOKEN), list, remove", (y) =>
      y
        .command(
          "add-wiki",
          "Connect a wiki (Confluence-style) account",
          (c) =>
            c
              .option("team", { type: "string", demandOption: true })
              .option("cloud-id", { type: "string", demandOption: true })
              .option("site-url", { type: "string", demandOption: true, describe: "The site clients name, e.g. https://acme.atlassian.net" })
              .option("api-base", { type: "string", describe: "Where the token is sent (default: https://api.atlassian.com/ex/confluence/<cloud-id>)" })
              .option("data-dir", dataDirOption),
          lazy(() => import("./commands/connections.js")),
        )
        .command(
          "add-git",
          "Connect a git account (used for private repositories on its hosts when a request brings no gitToken)",
          (c) =>
            c
              .option("team", { type: "string", demandOption: true })
              .option("host", { type: "array", string: true, demandOption: true, describe: "Host[:port] the token may be sent to (repeat for several)" })
              .option("data-dir", dataDirOption),
          lazy(() => import("./commands/connections.js")),
        )
        .command(
          "list",
          "List every team's connections (pasted tokens and OAuth accounts), never a token",
          (c) => c.option("json", { type: "boolean", default: false }).option("data-dir", dataDirOption),
          lazy(() => import("./commands/connections.js")),
        )
        .command(
          "remove <id>",
          "Remove a connection (an OAuth one is also revoked at its provider where possible)",
          (c) => c.positional("id", { type: "number", demandOption: true }).option("data-dir", dataDirOption),
          lazy(() => import("./commands/connections.js")),
        )
        .demandCommand(1, "Name a subcommand: lds connections add-wiki|add-git|list|remove."),
    )
    .command("secrets", "Manage the key that seals stored secrets", (y) =>
      y
        .command(
          "rotate-key",
          "Replace secret.key with a new key and re-seal every stored secret with it (server stopped; the old key is kept)",
          (c) => c.option("data-dir", dataDirOption).option("json", json),
          lazy(() => import("./commands/secrets.js")),
        )
        .demandCommand(1, "Name a subcommand: lds secrets rotate-key."),
    )
    .command("index", "Manage the search index (derived from the snippets)", (y) =>
      y
        .command(
          "rebuild",
          "Rebuild the whole search index (words and vectors) from the snippets (server stopped; with the server's LDS_EMBEDDINGS_*)",
          (c) => c.option("data-dir", dataDirOption).option("json", json),
          lazy(() => import("./commands/index-rebuild.js")),
        )
        .demandCommand(1, "Name a subcommand: lds index rebuild."),
    )
    .command("keys", "Manage API keys", (y) =>
      y
        .command(
          "create",
          "Create an API key for a user (shown once)",
          (c) => c.option("email", { type: "string", demandOption: true }).option("name", { type: "string" }).option("data-dir", dataDirOption).option("json", json),
          lazy(() => import("./commands/keys.js")),
        )
        .command(
          "revoke <prefix>",
          "Revoke a key by its prefix (ldssk-…)",
          (c) => c.positional("prefix", { type: "string", demandOption: true }).option("data-dir", dataDirOption),
          lazy(() => import("./commands/keys.js")),
        )
        .command(
          "list",
          "List keys (prefixes only)",
          (c) => c.option("data-dir", dataDirOption).option("json", json),
          lazy(() => import("./commands/keys.js")),
        )
        .demandCommand(1, "Name a subcommand: lds keys create|revoke|list."),
    )
    .command("ingest", "Index a source into a library now (operators; the public API queues the same work)", (y) =>
      y
        .command(
          "git <url>",
          "Clone a repository (token from $LDS_GIT_TOKEN) and index its documentation",
          (g) =>
            g
              .positional("url", { type: "string", demandOption: true, describe: "https:// clone URL" })
              .option("data-dir", dataDirOption)
              .option("branch", { type: "string", describe: "Branch (default: the repository's default branch)" })
              .option("tag", { type: "string", describe: "Index this tag (or branch) as a pinned version: /owner/repo/<tag>" })
              .option("version-name", { type: "string", describe: "With --tag: the name clients pin, when the tag's is not usable (release/1.2)" })
              .option("generate-docs", { type: "boolean", default: false, describe: "Also index documented exports of the source code" })
              .option("skip-version-filtering", { type: "boolean", default: false, describe: "Keep versioned_docs/, docs/v1/, …" })
              .option("allow-http-host", { type: "array", string: true, default: [], describe: "Internal host[:port] allowed over http" })
              .option("json", json),
          lazy(() => import("./commands/ingest-git.js")),
        )
        .demandCommand(1, "Name a source: lds ingest git URL."),
    )
    .command("libraries", "List the indexed libraries, move one to a new source, or read its usage metrics", (y) =>
      y
        .command(
          "list",
          "Every library: processing state (and why it failed), snippets, versions",
          (c) => c.option("data-dir", dataDirOption).option("json", json),
          lazy(() => import("./commands/libraries.js")),
        )
        .command(
          "move <id>",
          "Point a library at a new source (recorded in the audit log); the server re-indexes it",
          (c) =>
            c
              .positional("id", { type: "string", demandOption: true })
              .option("to", { type: "string", demandOption: true, describe: "The new repository's https:// clone URL" })
              .option("branch", { type: "string", describe: "Branch to serve (default: the repository's default branch)" })
              .option("allow-http-host", { type: "array", string: true, default: [], describe: "Internal host[:port] allowed over http" })
              .option("data-dir", dataDirOption)
              .option("json", json),
          lazy(() => import("./commands/libraries-move.js")),
        )
        .command(
          "metrics <id>",
          "Requests per day for a library, by client kind, with its top query topics and MCP clients",
          (c) =>
            c
              .positional("id", { type: "string", demandOption: true })
              .option("days", { type: "number", default: 30, describe: "Days back from today, 1-365" })
              .option("data-dir", dataDirOption)
              .option("json", json),
          lazy(() => import("./commands/libraries-metrics.js")),
        )
        .demandCommand(1, "Name a subcommand: lds libraries list, lds libraries move ID --to URL, or lds libraries metrics ID."),
    )
    .command(
      "audit",
      "Show the audit log: operator actions that changed what clients are served",
      (y) => y.option("limit", { type: "number", default: 100 }).option("data-dir", dataDirOption).option("json", json),
      lazy(() => import("./commands/audit.js")),
    )
    .command(
      "search <name> [query]",
      "Find libraries by name, ranked by name match, then by how well their content answers QUERY",
      (y) => y.positional("name", { type: "string", demandOption: true }).positional("query", { type: "string" }).option("data-dir", dataDirOption).option("json", json),
      lazy(() => import("./commands/search.js")),
    )
    .command(
      "context <id> <query>",
      "Show the snippets of a library (/owner/repo, /owner/repo/v1.2) that best answer QUERY",
      (y) =>
        y
          .positional("id", { type: "string", demandOption: true })
          .positional("query", { type: "string", demandOption: true })
          .option("tokens", { type: "number", default: CONTEXT_TOKENS.default, describe: "Token budget of the answer" })
          .option("data-dir", dataDirOption)
          .option("json", json),
      lazy(() => import("./commands/context.js")),
    )
    .command("backups", "List or prune the archives at a destination", (y) =>
      y
        .command(
          "list",
          "List archives, newest first",
          from,
          lazy(() => import("./commands/backups-list.js")),
        )
        .command(
          "prune",
          "Keep the newest N archives and delete the older ones (only LDS archives are touched)",
          (p) => from(p).option("keep", { type: "number", demandOption: true, describe: "How many archives to keep" }),
          lazy(() => import("./commands/backups-prune.js")),
        )
        .demandCommand(1, "Name a subcommand: lds backups list, or lds backups prune --keep N."),
    )
    .command(
      "verify <archive>",
      "Check an archive completely: structure, checksums, databases, key (a file or s3://…/<name>)",
      (y) =>
        identityOptions(
          destinationOptions(
            y
              .positional("archive", { type: "string", demandOption: true })
              .option("restore-test", { type: "boolean", default: false, describe: "Also restore it into a temporary volume and compare it with what was backed up (a restore drill)" })
              .option("json", json),
          ),
        ),
      lazy(() => import("./commands/verify.js")),
    )
    .command(
      "inspect <archive>",
      "Show what an archive holds, reading only its start (a file or s3://…/<name>)",
      (y) => identityOptions(destinationOptions(y.positional("archive", { type: "string", demandOption: true }).option("json", json))),
      lazy(() => import("./commands/inspect.js")),
    )
    .demandCommand(1, "Name a command: lds serve, backup, restore, backups, verify, inspect, search or context.");
}

type Handler = (argv: Record<string, unknown>) => Promise<void>;

/** A command module exports `run(argv)`, which returns the exit code; the process exits in `main` only. */
function lazy(load: () => Promise<{ run: (argv: never) => Promise<number> }>): Handler {
  return async (argv) => {
    const module = await load();
    process.exitCode = await module.run(argv as never);
  };
}

function exitCodeHelp(): string {
  const byExit = new Map<number, string[]>();
  for (const row of errorTable()) byExit.set(row.exit, [...(byExit.get(row.exit) ?? []), row.code]);
  const lines = [...byExit.entries()].sort(([a], [b]) => a - b).map(([exit, codes]) => `  ${String(exit).padStart(3)}  ${codes.join(", ")}`);
  return [
    "Exit codes:",
    `    ${EXIT.ok}  success`,
    ...lines,
    `   ${EXIT.restart}  lds serve restarting to apply a staged restore (for systemd Restart=on-failure)`,
    "",
    "Docs: docs/errors.md (what each code means and what to do).",
  ].join("\n");
}

/**
 * What the process environment sets for the code below the shells, which never reads process.env itself
 * (docs/architecture.md): the crash-test hook, and the AWS SDK's Node version notice.
 */
function readProcessEnvironment(): void {
  armFailpoint(process.env.LDS_FAILPOINT);
  // The SDK warns on every run that its 2027 releases need Node 22; no client option turns that off, only this
  // variable, read when an S3 client is made. Operators read our stderr from cron at 3 a.m.: that notice is for us
  // (docs/dependencies.md tracks it), not for them.
  process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= "true";
}

/** Parse argv, run one command, print any error and exit. The only place the process exits. */
export async function main(argv: string[], entry: Entry = "lds"): Promise<never> {
  readProcessEnvironment();
  const cli = commands(yargs(argv).scriptName(entry), entry)
    .version(APP_VERSION)
    .strict()
    .epilogue(exitCodeHelp())
    .wrap(Math.min(110, process.stdout.columns ?? 110))
    .fail((message, err) => {
      throw err ?? new LdsError("validation_error", message, { hint: `Run \`${entry} --help\` for the usage.` });
    });
  const wantsJson = argv.includes("--json");
  try {
    await cli.parseAsync();
  } catch (err) {
    process.exitCode = reportError(err, wantsJson);
  }
  // Let stdout drain before exiting; `serve` keeps running because its handler has not returned.
  process.exit(process.exitCode ?? 0);
}
