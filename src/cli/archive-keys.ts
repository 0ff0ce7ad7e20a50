import fs from "node:fs";
import { identitiesIn, type ArchiveEncryption, type ArchiveKeys } from "../archive/age.js";
import { LdsError } from "../errors.js";

/**
 * The age settings of the archive commands. Recipients are public (a flag is fine); identities and passphrases
 * are secrets and come from files only (never a flag's value: command lines show in `ps` and shell history).
 * backup: --age-recipient R (repeatable) or LDS_AGE_RECIPIENTS, --age-recipients-file F or LDS_AGE_RECIPIENTS_FILE,
 *         --age-passphrase-file F or LDS_AGE_PASSPHRASE_FILE.
 * verify, inspect, restore: --identity F (repeatable) or LDS_AGE_IDENTITY_FILE, --passphrase-file F or LDS_AGE_PASSPHRASE_FILE.
 */
export interface AgeArgs {
  ageRecipient?: string[];
  ageRecipientsFile?: string;
  agePassphraseFile?: string;
  /** Ask for the passphrase on the terminal (twice), instead of a file. */
  agePassphrase?: boolean;
  identity?: string[];
  passphraseFile?: string;
}

export async function encryptionFromArgs(argv: AgeArgs, env: NodeJS.ProcessEnv = process.env): Promise<ArchiveEncryption | undefined> {
  if (argv.agePassphrase) return { passphrase: await askNewPassphrase() };
  const recipients = [
    ...(argv.ageRecipient ?? []),
    ...words(env.LDS_AGE_RECIPIENTS),
    ...[argv.ageRecipientsFile ?? env.LDS_AGE_RECIPIENTS_FILE].filter((f): f is string => Boolean(f)).flatMap((file) => keyLines(read(file, "--age-recipients-file"), (l) => l.startsWith("age1"))),
  ];
  const passphraseFile = argv.agePassphraseFile ?? env.LDS_AGE_PASSPHRASE_FILE;
  if (recipients.length && passphraseFile) {
    throw new LdsError("validation_error", "Encrypt either to recipients or with a passphrase, not both.", { hint: "Recipients are recommended: backing up then needs no secret." });
  }
  if (passphraseFile) return { passphrase: passphrase(passphraseFile, "--age-passphrase-file") };
  return recipients.length ? { recipients: [...new Set(recipients)] } : undefined;
}

export function keysFromArgs(argv: AgeArgs, env: NodeJS.ProcessEnv = process.env): ArchiveKeys {
  const files = [...(argv.identity ?? []), ...(env.LDS_AGE_IDENTITY_FILE ? [env.LDS_AGE_IDENTITY_FILE] : [])];
  const identities = files.flatMap((file) => {
    const found = identitiesIn(read(file, "--identity"));
    if (found.length === 0) throw new LdsError("validation_error", `${file} holds no age identity (a line AGE-SECRET-KEY-1…).`, { hint: "Name the file age-keygen wrote." });
    return found;
  });
  const passphraseFile = argv.passphraseFile ?? env.LDS_AGE_PASSPHRASE_FILE;
  return {
    identities,
    passphrases: passphraseFile ? [passphrase(passphraseFile, "--passphrase-file")] : [],
    // On a terminal, a passphrase-encrypted archive asks for its passphrase (typed, never echoed, never argv).
    askPassphrase: process.stdin.isTTY && process.stderr.isTTY ? askPassphrase : undefined,
  };
}

/** A new passphrase, typed twice on the terminal; refused without one. */
async function askNewPassphrase(): Promise<string> {
  if (!process.stdin.isTTY) {
    throw new LdsError("confirmation_required", "--age-passphrase asks on a terminal, and there is none.", {
      hint: "Put the passphrase in a file and pass --age-passphrase-file FILE (or set LDS_AGE_PASSPHRASE_FILE).",
    });
  }
  const { default: prompts } = await import("prompts");
  const answers = await prompts([
    { type: "password", name: "first", message: "Passphrase for the archive" },
    { type: "password", name: "second", message: "The same passphrase again" },
  ]);
  if (!answers.first || answers.first !== answers.second) throw new LdsError("validation_error", "The two passphrases differ (or none was given); no archive was written.");
  return answers.first as string;
}

async function askPassphrase(): Promise<string> {
  const { default: prompts } = await import("prompts");
  const answer = await prompts({ type: "password", name: "value", message: "Passphrase of the archive" }, { onCancel: () => true });
  if (!answer.value) throw new LdsError("cancelled", "No passphrase was given; nothing was changed.");
  return answer.value as string;
}

const words = (text: string | undefined) => (text ?? "").split(/[\s,]+/).filter(Boolean);

/** Lines of an age key file that hold keys: comments and blank lines skipped. */
function keyLines(text: string, isKey: (line: string) => boolean): string[] {
  return text
    .split(/\r?\n/)
    .map((l) => l.trim())
    .filter((l) => l && !l.startsWith("#") && isKey(l));
}

function passphrase(file: string, flag: string): string {
  const value = read(file, flag).replace(/\r?\n$/, "");
  if (!value) throw new LdsError("validation_error", `${file} is empty: no passphrase.`, { hint: `Put the passphrase on the first line of the file ${flag} names.` });
  return value.split(/\r?\n/)[0]!;
}

function read(file: string, flag: string): string {
  try {
    return fs.readFileSync(file, "utf8");
  } catch (err) {
    throw new LdsError("validation_error", `${flag} ${file} cannot be read (${(err as NodeJS.ErrnoException).code ?? "error"}).`, { hint: "Check the path and its permissions." });
  }
}
