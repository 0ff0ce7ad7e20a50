import { meaningfulWords } from "../text/stop-words.js";

/** Turns text into fixed-length, L2-normalised vectors. */
export interface Embedder {
  /** Recorded in vectors.db: vectors of different embedders are not comparable, so a change rebuilds the index. */
  readonly id: string;
  readonly dimensions: number;
  /** Behind a network provider (slow to rebuild an index with, and able to fail): see remote-embedder.ts. */
  readonly remote?: boolean;
  /** How long a search waits for its query's embedding before it ranks by BM25 alone (remote providers). */
  readonly queryTimeoutMs?: number;
  /** `timeoutMs`/`attempts` bound a remote provider's requests (a query's embedding gets one short attempt). */
  embed(texts: string[], options?: { timeoutMs?: number; attempts?: number; signal?: AbortSignal }): Promise<Float32Array[]>;
}

/** @default 384 dimensions: small enough for fast search, large enough to keep collisions rare. */
export const DEFAULT_DIMENSIONS = 384;

/**
 * The default embedder: local and deterministic feature hashing of words, word bigrams and character 3-grams.
 * No model weights and no network, so an install works offline and identical text always gets the same vector.
 * v2 hashes features with FNV-1a instead of MD5 (v1): the same quality of spread for this purpose, without a
 * crypto object per feature, which made v1 two thirds of an ingestion's time. v2 also skips stop words and
 * puts each feature in two buckets; docs/benchmarks.md has what each change did to retrieval quality.
 */
export function createHashingEmbedder(dimensions = DEFAULT_DIMENSIONS): Embedder {
  return {
    id: `hashing-v2-${dimensions}`,
    dimensions,
    async embed(texts) {
      return texts.map((text) => embedOne(text, dimensions));
    },
  };
}

const WORD = /[\p{L}\p{N}_]+/gu;

function embedOne(text: string, dimensions: number): Float32Array {
  const vector = new Float32Array(dimensions);
  // Stop words would dominate every vector (they are the most frequent words of any text) and say nothing.
  const words = meaningfulWords(text.toLowerCase().match(WORD) ?? []);
  const add = (hash: number, weight: number) => {
    // Two buckets per feature ("multiple probes"): a collision then blurs half a feature instead of all of it,
    // which raised vector search alone from 74% to 82% hit@1 on the evaluation set. The top bit of each hash
    // picks the sign, so colliding features cancel out instead of piling up.
    vector[(hash & 0x7fffffff) % dimensions]! += (hash < 0 ? -1 : 1) * weight;
    const second = finalise(hash ^ GOLDEN);
    vector[(second & 0x7fffffff) % dimensions]! += (second < 0 ? -1 : 1) * weight;
  };
  for (let i = 0; i < words.length; i++) {
    const word = words[i]!;
    const wordHash = fnv1a(word, WORD_SEED);
    add(finalise(wordHash), 1);
    if (i + 1 < words.length) add(finalise(fnv1a(words[i + 1]!, Math.imul(wordHash, PRIME) ^ BIGRAM_SEED)), 0.7);
    const padded = `#${word}#`;
    for (let j = 0; j + 3 <= padded.length; j++) add(finalise(fnv1a3(padded, j)), 0.3);
  }
  let norm = 0;
  for (const value of vector) norm += value * value;
  norm = Math.sqrt(norm);
  if (norm > 0) for (let i = 0; i < dimensions; i++) vector[i]! /= norm;
  return vector;
}

const PRIME = 0x01000193;
const WORD_SEED = 0x811c9dc5 | 0;
const BIGRAM_SEED = 0x5bd1e995 | 0;
const TRIGRAM_SEED = 0x27d4eb2f | 0;
const GOLDEN = 0x9e3779b9 | 0;

function fnv1a(text: string, seed: number): number {
  let hash = seed;
  for (let i = 0; i < text.length; i++) hash = Math.imul(hash ^ text.charCodeAt(i), PRIME);
  return hash;
}

function fnv1a3(text: string, start: number): number {
  let hash = TRIGRAM_SEED;
  for (let i = start; i < start + 3; i++) hash = Math.imul(hash ^ text.charCodeAt(i), PRIME);
  return hash;
}

/** murmur3's finaliser: FNV's low bits are weak, and the bucket is taken from them. Returns a signed 32-bit int. */
function finalise(hash: number): number {
  hash ^= hash >>> 16;
  hash = Math.imul(hash, 0x85ebca6b);
  hash ^= hash >>> 13;
  hash = Math.imul(hash, 0xc2b2ae35);
  return hash ^ (hash >>> 16);
}
