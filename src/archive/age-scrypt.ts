import { createCipheriv, createDecipheriv, randomBytes, scryptSync } from "node:crypto";
import { Stanza, type Identity, type Recipient } from "age-encryption";

/**
 * age's passphrase stanza (`-> scrypt <salt> <log2 N>`), with Node's native scrypt: the age library's JavaScript
 * scrypt takes seconds at the standard work factor. The file key is sealed with ChaCha20-Poly1305 under
 * scrypt(passphrase, "age-encryption.org/v1/scrypt" + salt), as the age specification says.
 */
const LABEL = "age-encryption.org/v1/scrypt";
/** The age CLI's default work factor. */
const LOG_N = 18;
/** Hostile headers may ask for more: refused above this (2^20 needs 1 GiB of memory). */
const MAX_LOG_N = 20;

function derive(passphrase: string, salt: Buffer, logN: number): Buffer {
  return scryptSync(passphrase, Buffer.concat([Buffer.from(LABEL), salt]), 32, { N: 2 ** logN, r: 8, p: 1, maxmem: 2 ** logN * 1024 + 32 * 1024 * 1024 });
}

/** A passphrase recipient; `onFileKey` learns the file key (the payload is encrypted natively with it). */
export function scryptRecipient(passphrase: string, onFileKey: (fileKey: Uint8Array) => void): Recipient {
  return {
    wrapFileKey(fileKey) {
      onFileKey(fileKey);
      const salt = randomBytes(16);
      const cipher = createCipheriv("chacha20-poly1305", derive(passphrase, salt, LOG_N), Buffer.alloc(12), { authTagLength: 16 });
      const body = Buffer.concat([cipher.update(fileKey), cipher.final(), cipher.getAuthTag()]);
      return [new Stanza(["scrypt", salt.toString("base64").replace(/=+$/, ""), String(LOG_N)], body)];
    },
  };
}

/** A passphrase identity: the file key if this passphrase opens the header's scrypt stanza, else null. */
export function scryptIdentity(passphrase: string): Identity {
  return {
    unwrapFileKey(stanzas) {
      const stanza = stanzas.find((s) => s.args[0] === "scrypt");
      if (!stanza) return null;
      if (stanzas.length !== 1) throw new Error("a scrypt stanza must be the only one in the header");
      const [, saltText, logNText] = stanza.args;
      const salt = Buffer.from(saltText ?? "", "base64");
      const logN = Number(logNText);
      if (stanza.args.length !== 3 || salt.length !== 16 || !/^[1-9][0-9]*$/.test(logNText ?? "") || stanza.body.length !== 32) throw new Error("invalid scrypt stanza");
      if (logN > MAX_LOG_N) throw new Error(`its scrypt work factor 2^${logN} is above the 2^${MAX_LOG_N} LDS accepts`);
      const decipher = createDecipheriv("chacha20-poly1305", derive(passphrase, salt, logN), Buffer.alloc(12), { authTagLength: 16 });
      decipher.setAuthTag(Buffer.from(stanza.body.subarray(16)));
      try {
        return new Uint8Array(Buffer.concat([decipher.update(stanza.body.subarray(0, 16)), decipher.final()]));
      } catch {
        return null; // another passphrase
      }
    },
  };
}

/** A recipient that adds no stanza and only learns the file key (beside the real X25519 recipients). */
export function fileKeyCapture(onFileKey: (fileKey: Uint8Array) => void): Recipient {
  return {
    wrapFileKey(fileKey) {
      onFileKey(fileKey);
      return [];
    },
  };
}
