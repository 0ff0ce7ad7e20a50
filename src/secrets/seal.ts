import { createCipheriv, createDecipheriv, randomBytes } from "node:crypto";
import { LdsError } from "../errors.js";

/** Versioned prefix: a future scheme gets "lds:v2:" and both can be read side by side. */
const PREFIX_V1 = "lds:v1:";
const IV_BYTES = 12;
const TAG_BYTES = 16;
export const KEY_BYTES = 32;

/**
 * Seal a secret with AES-256-GCM. `context` (for example the secret's name) is bound as associated data, so a
 * sealed value copied under another name fails to open.
 */
export function seal(key: Buffer, plaintext: string, context = ""): string {
  assertKey(key);
  const iv = randomBytes(IV_BYTES);
  const cipher = createCipheriv("aes-256-gcm", key, iv);
  cipher.setAAD(Buffer.from(context, "utf8"));
  const body = Buffer.concat([cipher.update(plaintext, "utf8"), cipher.final()]);
  return PREFIX_V1 + Buffer.concat([iv, cipher.getAuthTag(), body]).toString("base64url");
}

/** Open a sealed secret; throws `secret_tampered` if it was altered, sealed under another key or context. */
export function unseal(key: Buffer, sealed: string, context = ""): string {
  assertKey(key);
  if (!sealed.startsWith(PREFIX_V1)) {
    throw new LdsError("secret_tampered", "A stored secret has an unknown format.", {
      hint: "The database may come from a newer LDS; upgrade, or set the secret again.",
    });
  }
  const raw = Buffer.from(sealed.slice(PREFIX_V1.length), "base64url");
  if (raw.length < IV_BYTES + TAG_BYTES) throw tampered();
  const decipher = createDecipheriv("aes-256-gcm", key, raw.subarray(0, IV_BYTES));
  decipher.setAAD(Buffer.from(context, "utf8"));
  decipher.setAuthTag(raw.subarray(IV_BYTES, IV_BYTES + TAG_BYTES));
  try {
    return Buffer.concat([decipher.update(raw.subarray(IV_BYTES + TAG_BYTES)), decipher.final()]).toString("utf8");
  } catch {
    throw tampered();
  }
}

function tampered(): LdsError {
  return new LdsError("secret_tampered", "A stored secret could not be decrypted with secret.key.", {
    hint: "secret.key does not belong to this database: restore the secret.key that was backed up with it.",
  });
}

function assertKey(key: Buffer): void {
  if (key.length !== KEY_BYTES) throw new LdsError("key_insecure", `secret.key must be ${KEY_BYTES} bytes.`);
}
