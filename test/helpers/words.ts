/** A vocabulary of words found in technical documentation, for texts that rank near or far from a question. */
export const DOC_WORDS =
  "cache retry timeout header token stream socket parser router plugin logger schema index backup restore archive cluster shard replica queue worker thread pool lock proxy cookie session upload download mirror bucket region".split(
    " ",
  );

/** Words drawn from `vocabulary` by a seeded generator: the same seed gives the same texts in every run. */
export function wordSource(seed: number, vocabulary: readonly string[] = DOC_WORDS): () => string {
  let state = seed;
  return () => vocabulary[(state = (Math.imul(state, 1103515245) + 12345) >>> 0) % vocabulary.length]!;
}
