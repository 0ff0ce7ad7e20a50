import type { EmbeddingSettings } from "../config/embedding-settings.js";
import { LdsError } from "../errors.js";
import type { Embedder } from "./embedder.js";

/** Attempts per batch: a busy provider (429, 5xx, a dropped connection, a timeout) is asked again after a pause. */
const ATTEMPTS = 3;
const BACKOFF_MS = 500;
/** A provider's answer larger than this is refused (a batch of 2,048 vectors of 8,192 floats as JSON is below it). */
const MAX_RESPONSE_BYTES = 512 * 1024 * 1024;

/** The two wire formats: each provider's request body and where its answer keeps the vectors. */
const WIRE = {
  // POST {base}/embeddings {model, input, encoding_format, dimensions} → {data: [{index, embedding}]}
  openai: {
    path: "/embeddings",
    body: (s: EmbeddingSettings, input: string[]) => ({ model: s.model, input, encoding_format: "float", dimensions: s.dimensions }),
    vectors: (answer: unknown, count: number): unknown[] => {
      const data = (answer as { data?: Array<{ index?: unknown; embedding?: unknown }> }).data;
      if (!Array.isArray(data)) return [];
      const ordered = new Array<unknown>(count);
      data.forEach((item, i) => (ordered[typeof item.index === "number" ? item.index : i] = item.embedding));
      return ordered;
    },
  },
  // POST {base}/api/embed {model, input} → {embeddings: [[…]]}
  ollama: {
    path: "/api/embed",
    body: (s: EmbeddingSettings, input: string[]) => ({ model: s.model, input }),
    vectors: (answer: unknown): unknown[] => (answer as { embeddings?: unknown[] }).embeddings ?? [],
  },
} as const;

/**
 * An embedder behind an HTTP provider (LDS_EMBEDDINGS_*): texts go in batches of `batch`, each request bounded by
 * `timeoutMs` and retried on 429, 5xx, timeouts and dropped connections; an answer of the wrong size or
 * dimension is refused. Every failure is an `embedding_failed` that names the provider's address and what it did,
 * never the key. The id names provider, model and dimensions: a change of any of them rebuilds the vector index.
 */
export function createRemoteEmbedder(settings: EmbeddingSettings): Embedder {
  const wire = WIRE[settings.provider];
  const endpoint = settings.url + wire.path;
  const headers: Record<string, string> = { "content-type": "application/json", accept: "application/json" };
  if (settings.apiKey) headers.authorization = `Bearer ${settings.apiKey}`;

  async function embedBatch(texts: string[], timeoutMs: number, attempts: number, stop?: AbortSignal): Promise<Float32Array[]> {
    let lastProblem = "";
    for (let attempt = 1; attempt <= attempts; attempt++) {
      if (attempt > 1) await new Promise((r) => setTimeout(r, BACKOFF_MS * 2 ** (attempt - 2)));
      if (stop?.aborted) throw new LdsError("interrupted", "Embedding was stopped.");
      let response: Response;
      try {
        const signal = stop ? AbortSignal.any([stop, AbortSignal.timeout(timeoutMs)]) : AbortSignal.timeout(timeoutMs);
        response = await fetch(endpoint, { method: "POST", headers, body: JSON.stringify(wire.body(settings, texts)), signal });
      } catch (err) {
        if (stop?.aborted) throw new LdsError("interrupted", "Embedding was stopped.");
        const timedOut = (err as Error).name === "TimeoutError";
        lastProblem = timedOut ? `did not answer within ${timeoutMs} ms` : `cannot be reached (${causeOf(err)})`;
        continue;
      }
      if (response.status === 429 || response.status >= 500) {
        lastProblem = `answered HTTP ${response.status}`;
        await response.body?.cancel();
        continue;
      }
      if (!response.ok)
        throw failed(
          `answered HTTP ${response.status}${await detail(response)}`,
          response.status === 401 || response.status === 403 ? "Check the key in LDS_EMBEDDINGS_API_KEY_FILE." : "Check LDS_EMBEDDINGS_MODEL and LDS_EMBEDDINGS_URL.",
        );
      if (Number(response.headers.get("content-length") ?? 0) > MAX_RESPONSE_BYTES) throw failed("sent an answer too large to be embeddings");
      let answer: unknown;
      try {
        answer = await response.json();
      } catch {
        throw failed("answered something that is not JSON");
      }
      return wire.vectors(answer, texts.length).map((vector, i) => checked(vector, i, texts.length));
    }
    throw failed(`${lastProblem}${attempts > 1 ? ` (${attempts} attempts)` : ""}`, "Check that the provider runs and answers; the library keeps serving its previous snippets.");
  }

  function checked(vector: unknown, index: number, count: number): Float32Array {
    if (!Array.isArray(vector)) throw failed(`answered no vector for input ${index + 1} of ${count}`);
    if (vector.length !== settings.dimensions) {
      throw failed(`answered ${vector.length} dimensions, but LDS_EMBEDDINGS_DIMENSIONS is ${settings.dimensions}`, "Set LDS_EMBEDDINGS_DIMENSIONS to what the model produces (or that the model supports).");
    }
    const out = Float32Array.from(vector as number[]);
    let norm = 0;
    for (const v of out) norm += v * v;
    if (!Number.isFinite(norm)) throw failed(`answered a vector with values that are not numbers for input ${index + 1}`);
    norm = Math.sqrt(norm);
    if (norm > 0) for (let i = 0; i < out.length; i++) out[i]! /= norm;
    return out;
  }

  function failed(what: string, hint = "Check the provider's log."): LdsError {
    return new LdsError("embedding_failed", `The embedding provider at ${endpoint} ${what}.`, { hint });
  }

  return {
    id: `${settings.provider}:${settings.model}:${settings.dimensions}`,
    dimensions: settings.dimensions,
    remote: true,
    queryTimeoutMs: settings.queryTimeoutMs,
    async embed(texts, options) {
      const vectors: Float32Array[] = [];
      for (let i = 0; i < texts.length; i += settings.batch)
        vectors.push(...(await embedBatch(texts.slice(i, i + settings.batch), options?.timeoutMs ?? settings.timeoutMs, options?.attempts ?? ATTEMPTS, options?.signal)));
      return vectors;
    },
  };
}

function causeOf(err: unknown): string {
  const cause = (err as { cause?: { code?: string; message?: string } }).cause;
  return cause?.code ?? cause?.message ?? (err as Error).message;
}

/** The first line of a provider's error body, short: it helps the operator and holds no key of ours. */
async function detail(response: Response): Promise<string> {
  const text = (await response.text().catch(() => "")).replace(/\s+/g, " ").trim();
  return text ? `: ${text.slice(0, 160)}` : "";
}
