// A documentation repository for the ingestion benchmarks: `files` Markdown files of ~20 KB each (30 sections of
// prose and fenced code), deterministic, served by real git over HTTP (bench/lib/git-http-server.js).
export const WORDS =
  "widget gadget render value size colour row column grid install configure option client server request response cache token queue job library snippet index search vector embed parse archive backup restore".split(
    " ",
  );

/**
 * One Markdown file of the repository; `edition` changes its words (a new commit to re-ingest).
 * @param {number} n
 * @param {number} [edition]
 * @returns {string}
 */
export function document(n, edition = 0) {
  let seed = n * 7919 + edition * 104729;
  const word = () => WORDS[(seed = (seed * 1103515245 + 12345) % 2147483648) % WORDS.length];
  const sentence = () => Array.from({ length: 14 }, word).join(" ") + ".";
  const parts = [`# Guide ${n}`, ""];
  for (let s = 0; s < 30; s++) {
    parts.push(
      `## Section ${s} of guide ${n}`,
      "",
      Array.from({ length: 6 }, sentence).join(" "),
      "",
      "```js",
      `const w${s} = new Widget({ size: ${s}, guide: ${n} });`,
      `w${s}.render("${word()}");`,
      "```",
      "",
    );
  }
  return parts.join("\n");
}

/**
 * The repository's files: path → content.
 * @param {number} files
 * @param {number} [edition]
 * @returns {Record<string, string>}
 */
export function documentTree(files, edition = 0) {
  /** @type {Record<string, string>} */
  const tree = {};
  for (let i = 0; i < files; i++) tree[`docs/part-${Math.floor(i / 100)}/guide-${i}.md`] = document(i, edition);
  return tree;
}
