import { createHash } from "node:crypto";

/** Turns text into fixed-length, L2-normalised vectors. */
export interface Embedder {
  readonly id: string;
  readonly dimensions: number;
  embed(texts: string[]): Promise<Float32Array[]>;
}

/** @default 384 dimensions: small enough for fast search, large enough to keep collisions rare. */
export const DEFAULT_DIMENSIONS = 384;

/**
 * The default embedder: local and deterministic feature hashing of words, word bigrams and character 3-grams.
 * No model weights and no network, so an install works offline and identical text always gets the same vector.
 */
export function createHashingEmbedder(dimensions = DEFAULT_DIMENSIONS): Embedder {
  return {
    id: `hashing-v1-${dimensions}`,
    dimensions,
    async embed(texts) {
      return texts.map((text) => embedOne(text, dimensions));
    },
  };
}

function embedOne(text: string, dimensions: number): Float32Array {
  const vector = new Float32Array(dimensions);
  const words = text.toLowerCase().match(/[\p{L}\p{N}_]+/gu) ?? [];
  const add = (feature: string, weight: number) => {
    const digest = createHash("md5").update(feature).digest();
    const bucket = digest.readUInt32LE(0) % dimensions;
    // A second hash bit picks the sign, so colliding features cancel out instead of piling up.
    vector[bucket]! += (digest[4]! & 1 ? 1 : -1) * weight;
  };
  for (let i = 0; i < words.length; i++) {
    const word = words[i]!;
    add(`w:${word}`, 1);
    if (i + 1 < words.length) add(`b:${word} ${words[i + 1]}`, 0.7);
    const padded = `#${word}#`;
    for (let j = 0; j + 3 <= padded.length; j++) add(`c:${padded.slice(j, j + 3)}`, 0.3);
  }
  let norm = 0;
  for (const value of vector) norm += value * value;
  norm = Math.sqrt(norm);
  if (norm > 0) for (let i = 0; i < dimensions; i++) vector[i]! /= norm;
  return vector;
}
