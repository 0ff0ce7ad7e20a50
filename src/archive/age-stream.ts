import { createCipheriv, createDecipheriv, hkdfSync } from "node:crypto";
import { Transform } from "node:stream";

/**
 * The payload of an age file (age-encryption.org/v1, "STREAM"): 64 KiB chunks of ChaCha20-Poly1305 under a key
 * derived from the file key and a 16-byte nonce, each chunk's nonce an 11-byte counter and a last-chunk flag.
 * Done with Node's native ChaCha20-Poly1305 (OpenSSL): the pure-JS cipher of the age library runs at about
 * 35 MB/s here, which would make an encrypted backup of 1 GiB four times slower than a plain one.
 */
const CHUNK = 64 * 1024;
const TAG = 16;

export function payloadKey(fileKey: Uint8Array, nonce: Uint8Array): Buffer {
  return Buffer.from(hkdfSync("sha256", fileKey, nonce, "payload", 32));
}

function chunkNonce(counter: number, last: boolean): Buffer {
  const nonce = Buffer.alloc(12);
  // 2^53 chunks of 64 KiB is beyond any archive: the counter's high bytes stay zero.
  nonce.writeUIntBE(counter, 5, 6);
  nonce[11] = last ? 1 : 0;
  return nonce;
}

/**
 * Cut a byte stream into blocks of `size`, calling `block(bytes, last)` for each (its output may come in parts,
 * handed on in order); a block is handed on only once it is known whether another follows (the last block gets
 * the flag, and may be shorter or, for an empty stream, empty). Full blocks are sliced from the incoming chunks
 * without copying; only a partial block is kept.
 */
export interface Blocks {
  /** The outputs of the blocks that `chunk` completed (all but one held back). */
  feed(chunk: Buffer): Buffer[];
  /** The outputs of the held block(s), the last one flagged. */
  finish(): Buffer[];
}

function cutter(size: number, block: (bytes: Buffer, last: boolean) => Buffer | Buffer[]): Blocks {
  let held: Buffer | undefined; // a full block waiting to learn whether it is the last
  const partial = Buffer.alloc(size);
  let filled = 0;
  return {
    feed(chunk) {
      const out: Buffer[] = [];
      let offset = 0;
      while (offset < chunk.length) {
        let full: Buffer;
        if (filled === 0 && chunk.length - offset >= size) {
          full = chunk.subarray(offset, offset + size);
          offset += size;
        } else {
          const n = Math.min(size - filled, chunk.length - offset);
          chunk.copy(partial, filled, offset, offset + n);
          filled += n;
          offset += n;
          if (filled < size) break;
          full = Buffer.from(partial);
          filled = 0;
        }
        if (held) out.push(...[block(held, false)].flat());
        held = full;
      }
      return out;
    },
    finish() {
      const out: Buffer[] = [];
      if (held && filled > 0) out.push(...[block(held, false)].flat());
      out.push(...[filled > 0 ? block(partial.subarray(0, filled), true) : block(held ?? Buffer.alloc(0), true)].flat());
      return out;
    },
  };
}

/**
 * The blocks as a stream. `joined`: the blocks one input chunk completes leave as one buffer (a 1 MiB tar chunk
 * is 16 sealed chunks): 16 times fewer pieces for every stream stage behind it to handle, which cost an encrypted
 * backup more than the cipher itself (docs/benchmarks.md).
 */
function transformOf(blocks: Blocks, { joined = false } = {}): Transform {
  return new Transform({
    transform(chunk: Buffer, _encoding, callback) {
      try {
        const outs = blocks.feed(chunk);
        if (joined && outs.length > 1) this.push(Buffer.concat(outs));
        else for (const out of outs) this.push(out);
        callback();
      } catch (err) {
        callback(err as Error);
      }
    },
    flush(callback) {
      try {
        for (const out of blocks.finish()) this.push(out);
        callback();
      } catch (err) {
        callback(err as Error);
      }
    },
  });
}

/** Plaintext in, STREAM chunks out. */
export function encryptPayload(key: Buffer): Transform {
  let counter = 0;
  return transformOf(
    cutter(CHUNK, (plain, last) => {
      const cipher = createCipheriv("chacha20-poly1305", key, chunkNonce(counter++, last), { authTagLength: TAG });
      const sealed = cipher.update(plain);
      cipher.final();
      // Joined with the others of its input chunk by transformOf: one copy, not two.
      return [sealed, cipher.getAuthTag()];
    }),
    { joined: true },
  );
}

/** STREAM chunks in, plaintext out; a chunk that fails its tag, or a missing final chunk, throws. */
export function payloadDecryptor(key: Buffer): Blocks {
  let counter = 0;
  return cutter(CHUNK + TAG, (sealed, last) => {
    if (sealed.length < TAG) throw new Error("the final chunk is cut short");
    const index = counter++;
    const decipher = createDecipheriv("chacha20-poly1305", key, chunkNonce(index, last), { authTagLength: TAG });
    decipher.setAuthTag(sealed.subarray(sealed.length - TAG));
    let plain: Buffer;
    try {
      plain = decipher.update(sealed.subarray(0, sealed.length - TAG));
      decipher.final();
    } catch {
      throw new Error(`chunk ${index + 1} fails its authentication tag${last ? " (or the file is cut short)" : ""}`);
    }
    if (last && plain.length === 0 && index > 0) throw new Error("the final chunk is empty");
    return plain;
  });
}

/** STREAM chunks in, plaintext out, on this thread. */
export function decryptPayload(key: Buffer): Transform {
  return transformOf(payloadDecryptor(key));
}
