import os from "node:os";

/**
 * A snippet's vector as PostgreSQL keeps it (`snippet_vectors.vector`, bytea): its float32 values, little-endian,
 * nothing else, so that the bytes are the vector bit for bit whatever reads them. Replicas turn them back into the
 * vectors of their search files (engine/postgres/search-follower.ts).
 */

const LITTLE_ENDIAN = os.endianness() === "LE";

export function vectorToBytes(vector: Float32Array): Buffer {
  // On a little-endian machine (every one Node runs on in practice) the array's own bytes are the format: a copy.
  if (LITTLE_ENDIAN) return Buffer.from(vector.buffer.slice(vector.byteOffset, vector.byteOffset + vector.byteLength));
  const bytes = Buffer.allocUnsafe(vector.length * 4);
  vector.forEach((value, i) => bytes.writeFloatLE(value, i * 4));
  return bytes;
}

export function bytesToVector(bytes: Uint8Array): Float32Array {
  if (bytes.byteLength % 4 !== 0) throw new Error(`a stored vector of ${bytes.byteLength} bytes is not float32 values`);
  const vector = new Float32Array(bytes.byteLength / 4);
  if (LITTLE_ENDIAN) {
    new Uint8Array(vector.buffer).set(bytes);
    return vector;
  }
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  for (let i = 0; i < vector.length; i++) vector[i] = view.getFloat32(i * 4, true);
  return vector;
}

/** Vectors of one width (one embedder's), their bytes end to end: one parameter for a chunk's vectors. */
export function vectorsSideBySide(vectors: Float32Array[]): { bytes: Buffer; width: number } {
  const width = (vectors[0]?.length ?? 0) * 4;
  const other = vectors.find((v) => v.length * 4 !== width);
  if (other) throw new Error(`vectors of ${width / 4} and ${other.length} dimensions cannot be written side by side`);
  return { bytes: Buffer.concat(vectors.map(vectorToBytes)), width };
}
