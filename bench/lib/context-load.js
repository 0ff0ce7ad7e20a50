// GET /v2/context as a load: `clients` loops sharing `requests` requests, each to the next server of `urls` in turn
// and with a question of its own (three words of bench/lib/docs-repo.js's documents, never asked twice in a run, so
// that no request is faster for repeating an earlier one's pages).
import { WORDS } from "./docs-repo.js";

const TRIPLES = WORDS.flatMap((a, i) => WORDS.flatMap((b, j) => WORDS.slice(j + 1).map((c) => (i < j ? `${a} ${b} ${c}` : undefined)))).filter(Boolean);
let asked = 0;
/** The next question of this process (each call a new one). */
export const nextQuestion = () => TRIPLES[(asked++ * 997) % TRIPLES.length];

/**
 * Run the load; answers the latencies in ms (sorted) and the wall seconds it took.
 * @param {{ urls: string[], key: string, libraryId: string, requests: number, clients: number }} load
 */
export async function contextLoad({ urls, key, libraryId, requests, clients }) {
  const latencies = [];
  let sent = 0;
  const started = performance.now();
  const client = async () => {
    while (sent < requests) {
      const url = urls[sent++ % urls.length];
      const begun = performance.now();
      const response = await fetch(`${url}/v2/context?${new URLSearchParams({ libraryId, query: nextQuestion() })}`, { headers: { authorization: `Bearer ${key}` } });
      const body = await response.text();
      if (!response.ok) throw new Error(`context from ${url}: ${response.status} ${body.slice(0, 200)}`);
      latencies.push(performance.now() - begun);
    }
  };
  await Promise.all(Array.from({ length: clients }, client));
  return { latencies: latencies.sort((a, b) => a - b), seconds: (performance.now() - started) / 1000 };
}
