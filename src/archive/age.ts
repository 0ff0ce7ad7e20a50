import { PassThrough, type Readable } from "node:stream";
import { payloadKey } from "./age-stream.js";
import { decryptPayloadInWorker } from "./age-decrypt-worker.js";
import { LdsError } from "../errors.js";
import { setting } from "../hints.js";
import { archiveDamaged } from "./manifest.js";

/**
 * Encrypted archives in the age format (age-encryption.org/v1), so that the standard `age` CLI decrypts what LDS
 * writes and LDS reads what `age` writes: an LDS archive, encrypted whole, streamed (no plaintext copy anywhere).
 * To recipients (X25519 `age1…` public keys: backing up needs no secret, only a restore needs the identity) or
 * with a passphrase (scrypt).
 */
export type ArchiveEncryption = { recipients: string[] } | { passphrase: string };

/** What may open an encrypted archive: age identities (`AGE-SECRET-KEY-1…`) and passphrases. */
export interface ArchiveKeys {
  identities: string[];
  passphrases: string[];
  /** Asked for a passphrase-encrypted archive when none was given (a terminal's prompt; never argv). */
  askPassphrase?: () => Promise<string>;
}

export const NO_KEYS: ArchiveKeys = { identities: [], passphrases: [] };

/** The identities in the text of an age identity file (as age-keygen writes it): comments and blank lines skipped. */
export function identitiesIn(text: string): string[] {
  return text
    .split(/\r?\n/)
    .map((line) => line.trim())
    .filter((line) => line.startsWith("AGE-SECRET-KEY-"));
}

const MAGIC = "age-encryption.org/v1\n";
/** The longest header LDS reads before it must have found the end of the stanzas. */
const MAX_HEADER_BYTES = 64 * 1024;

/** Whether a file starting with `head` is age-encrypted (its first line is age's version line). */
export function startsAsAge(head: Buffer): boolean {
  return head.subarray(0, MAGIC.length).equals(Buffer.from(MAGIC));
}

/** How an archive is encrypted, from its header: the stanza types (the header names no recipient). */
export interface AgeHeader {
  format: "age";
  stanzas: string[];
}

/**
 * An archive stream as the reader needs it: an age-encrypted one is decrypted with the keys given (its header's
 * MAC checked first), anything else passes unchanged. Missing or wrong keys are `archive_locked`, naming the
 * stanza types of the header; a damaged header or payload is `archive_corrupt`. Nothing is written either way.
 */
export async function openArchive(input: Readable, keys: ArchiveKeys): Promise<{ stream: Readable; encryption: AgeHeader | null }> {
  const head = await readHead(input, MAX_HEADER_BYTES);
  if (!startsAsAge(head)) {
    if (head.length) input.unshift(head);
    return { stream: input, encryption: null };
  }
  const header: AgeHeader = { format: "age", stanzas: stanzaTypes(head) };
  const macLine = head.indexOf("\n--- ");
  const headerEnd = macLine < 0 ? -1 : head.indexOf("\n", macLine + 1) + 1;
  if (headerEnd <= 0 || head.length < headerEnd + 16) {
    input.destroy();
    throw archiveDamaged("its age header is incomplete or longer than 64 KiB");
  }
  if (keys.identities.length === 0 && keys.passphrases.length === 0 && header.stanzas.includes("scrypt") && keys.askPassphrase) {
    keys = { ...keys, passphrases: [await keys.askPassphrase()] };
  }
  if (keys.identities.length === 0 && keys.passphrases.length === 0) {
    input.destroy();
    throw locked(`The archive is encrypted with age (${describe(header)}), and no identity or passphrase was given`);
  }
  // Loaded here, not with this module: the age library costs 50-90 ms of every command's start, and only an
  // encrypted archive needs it (verify and restore of a plain archive are measured against sha256sum and tar).
  const [{ Decrypter }, { scryptIdentity }] = await Promise.all([import("age-encryption"), import("./age-scrypt.js")]);
  const decrypter = new Decrypter();
  try {
    for (const identity of keys.identities) decrypter.addIdentity(identity);
  } catch {
    input.destroy();
    throw new LdsError("validation_error", "An identity file holds something that is not an age identity (AGE-SECRET-KEY-1…).", { hint: "Name the identity file age-keygen wrote." });
  }
  for (const passphrase of keys.passphrases) decrypter.addIdentity(scryptIdentity(passphrase));
  let fileKey: Uint8Array;
  try {
    fileKey = await decrypter.decryptHeader(head.subarray(0, headerEnd));
  } catch (err) {
    input.destroy();
    const message = (err as Error).message ?? String(err);
    if (/no identity matched/.test(message)) throw locked(`None of the given identities or passphrases opens this age archive (${describe(header)})`);
    if (/HMAC/i.test(message)) throw archiveDamaged("its age header fails its MAC (the header was altered, or belongs to another file)");
    throw archiveDamaged(`its age header cannot be read (${message.replace(/\.$/, "")})`);
  }
  // The header and the payload nonce are consumed here; the rest is the payload.
  const rest = head.subarray(headerEnd + 16);
  if (rest.length) input.unshift(rest);
  // In a worker thread: the cipher runs beside the tar reader's hashing and writing, not on top of it.
  const plain = decryptPayloadInWorker(payloadKey(fileKey, head.subarray(headerEnd, headerEnd + 16)));
  const stream = new PassThrough();
  plain.on("error", (err) => stream.destroy(archiveDamaged(`its age-encrypted payload does not decrypt (${err.message}: damaged or truncated)`)));
  input.on("error", (err) => stream.destroy(err));
  // A reader that stops early (inspect stops after the manifest) ends the file read and the decryption.
  stream.on("close", () => {
    input.destroy();
    plain.destroy();
  });
  input.pipe(plain).pipe(stream);
  return { stream, encryption: header };
}

/** The stanza types of an age header ("X25519", "scrypt", …), in order. */
function stanzaTypes(head: Buffer): string[] {
  const text = head.toString("latin1");
  const end = text.indexOf("\n--- ");
  return (end >= 0 ? text.slice(0, end) : text)
    .split("\n")
    .filter((line) => line.startsWith("-> "))
    .map((line) => (line.slice(3).split(" ")[0] ?? "").replace(/[^\w.+-]/g, "?").slice(0, 40));
}

function describe(header: AgeHeader): string {
  const counts = new Map<string, number>();
  for (const type of header.stanzas) counts.set(type, (counts.get(type) ?? 0) + 1);
  const list = [...counts].map(([type, n]) => (n > 1 ? `${n} ${type} stanzas` : `1 ${type} stanza`)).join(", ");
  const kind = header.stanzas.includes("scrypt") ? "a passphrase" : `${header.stanzas.length} recipient${header.stanzas.length === 1 ? "" : "s"}`;
  return `for ${kind}: ${list || "no stanza"}; an age header never names its recipients`;
}

function locked(what: string): LdsError {
  return new LdsError("archive_locked", `${what}. Nothing was changed.`, {
    hint: `Give the identity file that belongs to one of its recipients (${setting("ageIdentity")}), or the passphrase file of a passphrase-encrypted archive (${setting("agePassphrase")}).`,
  });
}

/** Read the start of a stream: an age header and its payload nonce, or the first chunk of anything else. */
async function readHead(input: Readable, max: number): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let size = 0;
  // The header ends with the "--- " MAC line; the magic alone tells a plain archive apart.
  while (size < max) {
    const chunk = await nextChunk(input);
    if (chunk === null) break;
    chunks.push(chunk);
    size += chunk.length;
    const sofar = Buffer.concat(chunks);
    if (!sofar.subarray(0, Math.min(sofar.length, MAGIC.length)).equals(Buffer.from(MAGIC).subarray(0, Math.min(sofar.length, MAGIC.length)))) break;
    const mac = sofar.indexOf("\n--- ");
    const end = mac < 0 ? -1 : sofar.indexOf("\n", mac + 1);
    if (end >= 0 && sofar.length >= end + 1 + 16) break;
  }
  return Buffer.concat(chunks);
}

function nextChunk(input: Readable): Promise<Buffer | null> {
  return new Promise((resolve, reject) => {
    const chunk = input.read() as Buffer | null;
    if (chunk !== null) return resolve(chunk);
    if (input.readableEnded) return resolve(null);
    const cleanup = () => {
      input.off("readable", onReadable);
      input.off("end", onEnd);
      input.off("error", onError);
    };
    const onReadable = () => {
      const next = input.read() as Buffer | null;
      if (next === null) return;
      cleanup();
      resolve(next);
    };
    const onEnd = () => (cleanup(), resolve(null));
    const onError = (err: Error) => (cleanup(), reject(err));
    input.on("readable", onReadable);
    input.on("end", onEnd);
    input.on("error", onError);
  });
}
