import type { IndexProbe } from "../index/search-index.js";

/** A search of the new batch made by its ingestion: the first snippet's title words and embedding. */
export type ProbeSearch = IndexProbe;

/** The probe for a batch whose first snippet is `title` with `vector`: up to three of its words (letters and digits). */
export function probeOf(title: string, vector: Float32Array): ProbeSearch {
  // A copy: the chunk's vectors may be handed over to the writer thread (their memory moves with them).
  return { words: (title.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? []).slice(0, 3), vector: new Float32Array(vector) };
}
