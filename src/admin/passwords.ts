import { randomBytes, scrypt as scryptCallback, timingSafeEqual, type ScryptOptions } from "node:crypto";
import { LdsError } from "../errors.js";

const scrypt = (password: string, salt: Buffer, keylen: number, options: ScryptOptions) =>
  new Promise<Buffer>((resolve, reject) => scryptCallback(password, salt, keylen, options, (err, key) => (err ? reject(err) : resolve(key))));

/** scrypt cost: N=2^15, r=8 (about 50 ms and 32 MiB here): slow for an attacker, fine for a login. */
const PARAMS = { N: 2 ** 15, r: 8, p: 1, maxmem: 64 * 1024 * 1024 };
const KEY_BYTES = 32;
export const MIN_PASSWORD_LENGTH = 12;

/** `scrypt$N$r$p$salt$hash`, the parameters stored so that they can be raised later without breaking logins. */
export async function hashPassword(password: string): Promise<string> {
  assertAcceptable(password);
  const salt = randomBytes(16);
  const key = await scrypt(password, salt, KEY_BYTES, PARAMS);
  return ["scrypt", PARAMS.N, PARAMS.r, PARAMS.p, salt.toString("base64"), key.toString("base64")].join("$");
}

/** Constant-time comparison; an unknown user is checked against a dummy hash so that timing does not tell. */
export async function verifyPassword(password: string, stored: string | undefined): Promise<boolean> {
  const [scheme, n, r, p, salt, hash] = (stored ?? DUMMY_HASH).split("$");
  if (scheme !== "scrypt" || !salt || !hash) return false;
  const expected = Buffer.from(hash, "base64");
  const actual = await scrypt(password, Buffer.from(salt, "base64"), expected.length, {
    N: Number(n),
    r: Number(r),
    p: Number(p),
    maxmem: PARAMS.maxmem,
  });
  return timingSafeEqual(actual, expected) && stored !== undefined;
}

export function assertAcceptable(password: string): void {
  if (password.length < MIN_PASSWORD_LENGTH) {
    throw new LdsError("validation_error", `The password must be at least ${MIN_PASSWORD_LENGTH} characters long.`, {
      hint: "Choose a longer password (a passphrase of several words works well).",
    });
  }
}

const DUMMY_HASH = ["scrypt", PARAMS.N, PARAMS.r, PARAMS.p, Buffer.alloc(16).toString("base64"), Buffer.alloc(KEY_BYTES).toString("base64")].join("$");
