/**
 * Words that carry no meaning for ranking. Without them a question such as "how do I add a route" matches on
 * every snippet that contains "a", and their counts drown the few words that matter in an embedding.
 * Used by both rankings (the BM25 query and the embedder), so that both ignore the same words.
 */
export const STOP_WORDS: ReadonlySet<string> = new Set(
  (
    "a an and are as at be by can do does for from how i if in into is it me my of on or should so that the their then there " + "these this to use using was we what when where which who why will with you your"
  ).split(" "),
);

/** The words that matter, or all of them when every word is a stop word ("how to" still means something). */
export function meaningfulWords(words: string[]): string[] {
  const kept = words.filter((w) => !STOP_WORDS.has(w));
  return kept.length ? kept : words;
}
