import { setting } from "../hints.js";
import type { AgeHeader, ArchiveEncryption } from "./age.js";

/** A warning (not an error) that each shell words: what happened, and the setting that fixes it. */
export interface ArchiveWarning {
  code: "archive_key_in_clear" | "restore_drill_failed";
  message: string;
  hint: string;
}

/** Every unencrypted archive holds key/secret.key as it is: say so wherever an archive is written or read. */
export function keyInClearWarning(encryption: AgeHeader | ArchiveEncryption | null | undefined): ArchiveWarning[] {
  if (encryption) return [];
  return [
    {
      code: "archive_key_in_clear",
      message: "This archive holds the volume key in clear; anyone who can read it can read your stored credentials (git and wiki tokens, S3 keys).",
      hint: `Encrypt archives to an age recipient (${setting("encryptionRecipients")}); keep the identity offline, it is needed only to restore.`,
    },
  ];
}
