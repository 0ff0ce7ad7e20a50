import fs from "node:fs";
import { LdsError } from "../errors.js";
import { wholeFromEnv } from "./env-number.js";

/**
 * An embedding provider, from the environment (server and CLI read the same variables, so both embed alike):
 * LDS_EMBEDDINGS_URL (unset: the offline hashing embedder), LDS_EMBEDDINGS_PROVIDER (`openai`, the default: any
 * OpenAI-compatible /embeddings endpoint such as OpenAI, Azure, vLLM, LM Studio, llama.cpp or TEI; or `ollama`),
 * LDS_EMBEDDINGS_MODEL, LDS_EMBEDDINGS_DIMENSIONS, LDS_EMBEDDINGS_API_KEY_FILE (or LDS_EMBEDDINGS_API_KEY),
 * LDS_EMBEDDINGS_BATCH, LDS_EMBEDDINGS_TIMEOUT_MS and LDS_EMBEDDINGS_QUERY_TIMEOUT_MS.
 */
export interface EmbeddingSettings {
  provider: "openai" | "ollama";
  /** The provider's base address: `…/v1` for OpenAI-compatible servers, the server root for Ollama. */
  url: string;
  model: string;
  dimensions: number;
  /** Never logged, never stored in the volume: read from a file (or the environment) at start. */
  apiKey?: string;
  batch: number;
  timeoutMs: number;
  /** A query embedding that takes longer is abandoned and the search ranks by BM25 alone. */
  queryTimeoutMs: number;
}

export function embeddingSettingsFromEnv(env: NodeJS.ProcessEnv): EmbeddingSettings | null {
  const url = env.LDS_EMBEDDINGS_URL?.trim();
  if (!url) return null;
  const refuse = (what: string, hint: string) => new LdsError("validation_error", `${what}.`, { hint });
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw refuse(`LDS_EMBEDDINGS_URL is not a URL ("${url.slice(0, 80)}")`, "Set it to the provider's base address, e.g. http://127.0.0.1:11434 (Ollama) or https://api.openai.com/v1.");
  }
  if (parsed.username || parsed.password) throw refuse("LDS_EMBEDDINGS_URL must not hold credentials", "Put the key in a file named by LDS_EMBEDDINGS_API_KEY_FILE.");
  const provider = env.LDS_EMBEDDINGS_PROVIDER?.trim() || "openai";
  if (provider !== "openai" && provider !== "ollama")
    throw refuse(`LDS_EMBEDDINGS_PROVIDER must be openai or ollama (got "${provider.slice(0, 40)}")`, "openai covers every OpenAI-compatible /embeddings endpoint.");
  const model = env.LDS_EMBEDDINGS_MODEL?.trim();
  if (!model) throw refuse("LDS_EMBEDDINGS_MODEL is required with LDS_EMBEDDINGS_URL", "Name the embedding model, e.g. text-embedding-3-small or nomic-embed-text.");
  const whole = (name: string, fallback: number | undefined, min: number, max: number) => wholeFromEnv(env, name, fallback, min, max);
  const keyFile = env.LDS_EMBEDDINGS_API_KEY_FILE?.trim();
  let apiKey = env.LDS_EMBEDDINGS_API_KEY?.trim() || undefined;
  if (keyFile) {
    try {
      apiKey = fs.readFileSync(keyFile, "utf8").trim();
    } catch (err) {
      throw refuse(`LDS_EMBEDDINGS_API_KEY_FILE cannot be read (${(err as NodeJS.ErrnoException).code ?? "error"})`, "Point it at a readable file that holds the key.");
    }
  }
  return {
    provider,
    url: url.replace(/\/+$/, ""),
    model,
    // The index's column width: the provider must answer exactly this many dimensions.
    dimensions: whole("LDS_EMBEDDINGS_DIMENSIONS", undefined, 2, 8192),
    apiKey,
    batch: whole("LDS_EMBEDDINGS_BATCH", 64, 1, 2048),
    timeoutMs: whole("LDS_EMBEDDINGS_TIMEOUT_MS", 30_000, 100, 600_000),
    queryTimeoutMs: whole("LDS_EMBEDDINGS_QUERY_TIMEOUT_MS", 2_000, 50, 60_000),
  };
}
