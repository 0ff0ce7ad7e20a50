// The fixed rule that splits the questions into a tuning half and a held-out half. Ranking changes may be tuned on
// the tuning half only; the held-out half is never looked at while tuning, so it measures what a change generalises.
// Stratified: within every (project, kind) group the questions are ordered by a SHA-256 of their id and alternate
// between the halves, so both halves hold every project and every kind of question in the same proportions. The
// alternation runs on across the groups (in key order), so groups of odd size do not all give their extra question
// to the same half.
import crypto from "node:crypto";

export const HALVES = ["tuning", "heldOut"];

/**
 * The half of each question, by id.
 * @param {Array<{id: string, project: string, kind: string}>} questions
 * @returns {Map<string, "tuning" | "heldOut">}
 */
export function splitHalves(questions) {
  const groups = new Map();
  for (const q of questions) {
    const key = `${q.project}\u0000${q.kind}`;
    if (!groups.has(key)) groups.set(key, []);
    groups.get(key).push(q.id);
  }
  const digest = (id) => crypto.createHash("sha256").update(id).digest("hex");
  const half = new Map();
  let next = 0;
  for (const key of [...groups.keys()].sort()) {
    const ordered = groups
      .get(key)
      .map((id) => [digest(id), id])
      .sort((a, b) => (a[0] < b[0] ? -1 : 1));
    for (const [, id] of ordered) half.set(id, HALVES[next++ % 2]);
  }
  return half;
}
