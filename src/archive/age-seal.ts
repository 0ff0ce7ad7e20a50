import { randomBytes } from "node:crypto";
import { Encrypter } from "age-encryption";
import { LdsError } from "../errors.js";
import type { ArchiveEncryption } from "./age.js";
import { fileKeyCapture, scryptRecipient } from "./age-scrypt.js";
import { payloadKey } from "./age-stream.js";

// The writing side of age (age.ts reads): apart, so that a command reading a plain archive never loads the age
// library. A backup imports this module only when it encrypts.

/** Check recipients before anything is written: a typo must fail the command, not the 3 a.m. backup. */
export function checkRecipients(recipients: string[]): void {
  if (recipients.length === 0) throw new LdsError("validation_error", "No age recipient given.", { hint: "Name at least one age1… public key (age-keygen -y identity.txt prints it)." });
  for (const recipient of recipients) {
    try {
      new Encrypter().addRecipient(recipient);
    } catch {
      throw new LdsError("validation_error", `"${recipient.slice(0, 80)}" is not an age recipient.`, {
        hint: "A recipient is a public key such as age1ql3z7hjy54pw3hyww5ayyfg7zqgvc7w3j2elw8zmrj2kg5sfn9aqmcac8p.",
      });
    }
  }
}

/** What encrypting an archive takes: the age header (with the payload's nonce), then the payload under `key`. */
export interface AgeSealing {
  head: Buffer;
  key: Buffer;
}

/**
 * The header is made by the age library (recipient stanzas and the header's MAC); the payload is then sealed by
 * Node's native cipher (age-stream.ts), on whichever thread writes the archive (archive-bytes.ts).
 */
export async function ageSealing(encryption: ArchiveEncryption): Promise<AgeSealing> {
  let fileKey: Uint8Array | undefined;
  const encrypter = new Encrypter();
  if ("passphrase" in encryption) encrypter.addRecipient(scryptRecipient(encryption.passphrase, (key) => (fileKey = key)));
  else {
    for (const recipient of encryption.recipients) encrypter.addRecipient(recipient);
    encrypter.addRecipient(fileKeyCapture((key) => (fileKey = key)));
  }
  // An empty file is the header, the payload nonce (16 bytes) and one empty final chunk (its 16-byte tag).
  const empty = await encrypter.encrypt(new Uint8Array(0));
  const header = Buffer.from(empty.subarray(0, empty.length - 32));
  const nonce = randomBytes(16);
  return { head: Buffer.concat([header, nonce]), key: payloadKey(fileKey!, nonce) };
}
