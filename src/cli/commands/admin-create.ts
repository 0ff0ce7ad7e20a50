import prompts from "prompts";
import { assertAcceptable } from "../../admin/passwords.js";
import { LdsError } from "../../errors.js";
import { takeAdminPassword } from "../../config/admin-password.js";
import { createAdmin } from "../../ops/admins.js";
import { commandActor } from "../cli-actor.js";
import { withRecords } from "../with-volume.js";

export async function run(argv: { dataDir?: string; username: string; passwordStdin: boolean }): Promise<number> {
  const password = await readPassword(argv.passwordStdin);
  assertAcceptable(password); // before the volume is opened: a short password changes nothing
  await withRecords(argv.dataDir, ({ store }) => createAdmin(store, commandActor(), argv.username, password), { purpose: "admin create" });
  process.stdout.write(`Created admin ${argv.username}. Log in with POST /api/auth/login.\n`);
  return 0;
}

/** Never from a flag's value: command lines are visible in `ps` and shell history. */
async function readPassword(fromStdin: boolean): Promise<string> {
  if (fromStdin) {
    const chunks: Buffer[] = [];
    for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
    return Buffer.concat(chunks)
      .toString("utf8")
      .replace(/\r?\n$/, "");
  }
  const fromEnv = takeAdminPassword(process.env);
  if (fromEnv) return fromEnv;
  if (!process.stdin.isTTY) {
    throw new LdsError("confirmation_required", "No password given and no terminal to ask on.", {
      hint: "Pipe it in with --password-stdin, or set LDS_ADMIN_PASSWORD_FILE to a file holding it.",
    });
  }
  const answers = await prompts([
    { type: "password", name: "first", message: "Password (12 characters or more)" },
    { type: "password", name: "second", message: "Repeat the password" },
  ]);
  if (!answers.first || answers.first !== answers.second) throw new LdsError("validation_error", "The two passwords differ (or none was given).");
  return answers.first as string;
}
